// A side experiment, not part of `npm run bench`: the SQL of each request path replayed straight
// through node-pg on one connection (no HTTP, no Nest, no TypeORM), to price the round trips
// BENCHMARKS.md suggests cutting. It uses the library's own statements (dist/esm/store/table/reservation.sql.js, dist/esm/store/table/record.sql.js)
// and the demo's tables, on DATABASE_URL or an embedded PostgreSQL:
//
//   npm run build && node bench/sql-paths.mjs
//
// Variants of the execute path: as the library sends it now (4 round trips: the key's lock and
// lookup with START TRANSACTION, the key row's INSERT with COMMIT); as it sent it first (6 round trips); with a plain INSERT …
// ON CONFLICT DO NOTHING as the reservation (the straightforward implementation); with
// the reservation and the completion as named prepared statements (planned once per
// connection); with BEGIN sent together with the reservation and the completion UPDATE together
// with COMMIT (4 round trips, values inlined as literals, since a multi-statement message takes
// no parameters); both (SQL PREPARE once per connection, EXECUTE in the merged messages).
// Variants of the replay path: as sent (3 round trips), with the reservation prepared, and one
// autocommit lookup (1 round trip).
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { cpuMeter, localPostmaster } from './cpu.mjs';
import { startDatabase } from './database.mjs';
import { RECORD_OUTCOME as INSERT_OUTCOME } from '../dist/esm/store/table/record.sql.js';
import { KEY_ROW, LOCK_KEY } from '../dist/esm/store/table/reservation.sql.js';

// The reservation and completion as the library sent them before transactional mode stopped
// writing an in_progress row (kept here to price that change too).
const RESERVE = `INSERT INTO idempotency_keys AS k (key, caller, endpoint, fingerprint, expires_at)
SELECT $2, $3, $4, $5, now() + $6::bigint * interval '1 millisecond' WHERE pg_try_advisory_xact_lock($1::bigint)
ON CONFLICT (key, caller, endpoint) DO UPDATE
  SET fingerprint = EXCLUDED.fingerprint, state = 'in_progress', status = NULL, response_headers = NULL,
      response_body = NULL, locked_until = NULL, lease_token = NULL, created_at = now(), expires_at = EXCLUDED.expires_at
  WHERE k.expires_at <= now() OR (k.state = 'in_progress' AND k.locked_until <= now() AND k.fingerprint = EXCLUDED.fingerprint)
RETURNING 1`;
const COMPLETE = `UPDATE idempotency_keys SET state = 'completed', status = $4, response_headers = $5, response_body = $6
WHERE key = $1 AND caller = $2 AND endpoint = $3`;

const ITERATIONS = Number(process.env.SQL_PATHS_ITERATIONS ?? 3000);
const INSERT_PAYMENT = `INSERT INTO payments (caller, amount, currency) VALUES ($1, $2, $3) RETURNING id, created_at`;
const SELECT_PAYMENT = `SELECT id, amount, currency, created_at FROM payments WHERE id = $1`;
const LOOKUP = `SELECT fingerprint, state, status, response_headers, response_body FROM idempotency_keys
  WHERE key = $1 AND caller = $2 AND endpoint = $3 AND expires_at > now()`;
// The "straightforward in-transaction implementation": no lookup, no advisory lock.
const PLAIN_RESERVE = `INSERT INTO idempotency_keys (key, caller, endpoint, fingerprint, expires_at)
  VALUES ($1, $2, $3, $4, now() + $5::bigint * interval '1 millisecond') ON CONFLICT DO NOTHING RETURNING 1`;
const ENDPOINT = 'POST /payments';
const HEADERS = JSON.stringify([['content-type', 'application/json; charset=utf-8']]);
const BODY = Buffer.from(
  '{"id":"5f0c6f43-2a3b-4a4e-9a51-5b0a7a0e6d1e","amount":1250,"currency":"EUR","createdAt":"2026-01-01T00:00:00.000Z"}',
);
const FINGERPRINT = Buffer.alloc(32, 7);

const database = await startDatabase();
const client = new pg.Client({ connectionString: database.url });
await client.connect();
const meter = cpuMeter({ client: process.pid }, await localPostmaster(database.sql));
const literal = (value) =>
  value === null
    ? 'NULL'
    : Buffer.isBuffer(value)
      ? `'\\x${value.toString('hex')}'::bytea`
      : typeof value === 'number'
        ? String(value)
        : client.escapeLiteral(String(value));
const inline = (sql, values) => sql.replace(/\$(\d+)/g, (_, n) => literal(values[Number(n) - 1]));
const lockId = () => String(BigInt.asIntN(64, BigInt(`0x${randomUUID().replace(/-/g, '').slice(0, 16)}`)));

async function business(caller) {
  const { rows } = await client.query(INSERT_PAYMENT, [caller, 1250, 'EUR']);
  await client.query(SELECT_PAYMENT, [rows[0].id]);
}

const replayKey = randomUUID();
const paths = {
  'baseline: BEGIN, INSERT, SELECT, COMMIT': async () => {
    await client.query('BEGIN');
    await business('sql-baseline');
    await client.query('COMMIT');
  },
  'execute, as first sent: BEGIN, reserve, INSERT, SELECT, UPDATE, COMMIT': async () => {
    const key = randomUUID();
    await client.query('BEGIN');
    await client.query(RESERVE, [lockId(), key, 'sql-execute', ENDPOINT, FINGERPRINT, 86_400_000]);
    await business('sql-execute');
    await client.query(COMPLETE, [key, 'sql-execute', ENDPOINT, 201, HEADERS, BODY]);
    await client.query('COMMIT');
  },
  'execute, the straightforward way: a plain INSERT … ON CONFLICT DO NOTHING reservation': async () => {
    const key = randomUUID();
    await client.query('BEGIN');
    await client.query(PLAIN_RESERVE, [key, 'sql-plain', ENDPOINT, FINGERPRINT, 86_400_000]);
    await business('sql-plain');
    await client.query(COMPLETE, [key, 'sql-plain', ENDPOINT, 201, HEADERS, BODY]);
    await client.query('COMMIT');
  },
  'execute, reserve and UPDATE as named prepared statements': async () => {
    const key = randomUUID();
    await client.query('BEGIN');
    await client.query({
      name: 'reserve',
      text: RESERVE,
      values: [lockId(), key, 'sql-named', ENDPOINT, FINGERPRINT, 86_400_000],
    });
    await business('sql-named');
    await client.query({ name: 'complete', text: COMPLETE, values: [key, 'sql-named', ENDPOINT, 201, HEADERS, BODY] });
    await client.query('COMMIT');
  },
  'execute, BEGIN+reserve and UPDATE+COMMIT in one message each (4 round trips)': async () => {
    const key = randomUUID();
    await client.query(`BEGIN; ${inline(RESERVE, [lockId(), key, 'sql-merged', ENDPOINT, FINGERPRINT, 86_400_000])}`);
    await business('sql-merged');
    await client.query(`${inline(COMPLETE, [key, 'sql-merged', ENDPOINT, 201, HEADERS, BODY])}; COMMIT`);
  },
  'execute, PREPAREd once, BEGIN+EXECUTE reserve and EXECUTE complete+COMMIT in one message each (4 round trips)':
    async () => {
      const key = randomUUID();
      await client.query(
        `BEGIN; EXECUTE reserve_statement(${[lockId(), key, 'sql-both', ENDPOINT, FINGERPRINT, 86_400_000].map(literal).join(', ')})`,
      );
      await business('sql-both');
      await client.query(
        `EXECUTE complete_statement(${[key, 'sql-both', ENDPOINT, 201, HEADERS, BODY].map(literal).join(', ')}); COMMIT`,
      );
    },
  'execute, as sent now (4 round trips): START TRANSACTION + EXECUTE lock + EXECUTE key_row, INSERT, SELECT, EXECUTE insert_outcome + COMMIT':
    async () => {
      const key = randomUUID();
      await client.query(
        `START TRANSACTION; EXECUTE ${LOCK_KEY.name}(${literal(lockId())}); EXECUTE ${KEY_ROW.name}(${[key, 'sql-now', ENDPOINT, FINGERPRINT].map(literal).join(', ')})`,
      );
      await business('sql-now');
      await client.query(
        `EXECUTE ${INSERT_OUTCOME.name}(${[key, 'sql-now', ENDPOINT, FINGERPRINT, 201, HEADERS, BODY, 86_400_000, null].map(literal).join(', ')}); COMMIT`,
      );
    },
  'replay, as sent: BEGIN, reserve, ROLLBACK': async () => {
    await client.query('BEGIN');
    await client.query(RESERVE, [lockId(), replayKey, 'sql-replay', ENDPOINT, FINGERPRINT, 86_400_000]);
    await client.query('ROLLBACK');
  },
  'replay, reserve as a named prepared statement: BEGIN, reserve, ROLLBACK': async () => {
    await client.query('BEGIN');
    await client.query({
      name: 'reserve',
      text: RESERVE,
      values: [lockId(), replayKey, 'sql-replay', ENDPOINT, FINGERPRINT, 86_400_000],
    });
    await client.query('ROLLBACK');
  },
  'replay, one autocommit lookup of the completed row': async () => {
    await client.query(LOOKUP, [replayKey, 'sql-replay', ENDPOINT]);
  },
};

try {
  await client.query(`PREPARE reserve_statement AS ${RESERVE}`);
  await client.query(`PREPARE complete_statement AS ${COMPLETE}`);
  for (const statement of [LOCK_KEY, KEY_ROW, INSERT_OUTCOME]) {
    await client.query(`PREPARE ${statement.name} (${statement.types.join(', ')}) AS ${statement.text}`);
  }
  // the replay key, completed
  await client.query('BEGIN');
  await client.query(RESERVE, [lockId(), replayKey, 'sql-replay', ENDPOINT, FINGERPRINT, 86_400_000]);
  await client.query(COMPLETE, [replayKey, 'sql-replay', ENDPOINT, 201, HEADERS, BODY]);
  await client.query('COMMIT');
  console.log(
    `PostgreSQL ${database.version}, ${database.kind}; ${ITERATIONS} sequential requests per path, one connection\n`,
  );
  console.log('| path | ms per request | PostgreSQL CPU ms/request | client CPU ms/request |');
  console.log('|---|---:|---:|---:|');
  for (const [name, path] of Object.entries(paths)) {
    for (let i = 0; i < ITERATIONS / 5; i++) await path(); // warm-up
    const before = meter.take();
    const started = performance.now();
    for (let i = 0; i < ITERATIONS; i++) await path();
    const elapsed = performance.now() - started;
    const cpu = meter.since(before);
    const perRequest = (seconds) => (cpu && seconds !== undefined ? ((seconds * 1000) / ITERATIONS).toFixed(3) : '—');
    console.log(
      `| ${name} | ${(elapsed / ITERATIONS).toFixed(3)} | ${perRequest(cpu?.postgres)} | ${perRequest(cpu?.client)} |`,
    );
  }
} finally {
  await client.end();
  await database.stop();
}
