import pg from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { scopeKey } from '../../src/key/scoped-key.js';
import { databaseUrl } from './apps.js';

let pool: pg.Pool | undefined;

/** Runs SQL on the test database, outside any app (to look at what a user would see). */
export async function sql<Row = any>(text: string, params: unknown[] = []): Promise<Row[]> {
  pool ??= new pg.Pool({ connectionString: databaseUrl(), max: 4 });
  return (await pool.query(text, params)).rows as Row[];
}

export async function closeSql(): Promise<void> {
  await pool?.end();
  pool = undefined;
}

/** How many payments (business writes) a caller has. */
export async function paymentCount(caller: string): Promise<number> {
  const [row] = await sql<{ n: string }>('SELECT count(*) AS n FROM payments WHERE caller = $1', [caller]);
  return Number(row.n);
}

/** The caller's rows in idempotency_keys. */
export function keyRows(
  caller: string,
): Promise<Array<{ key: string; endpoint: string; state: string; status: number | null }>> {
  return sql('SELECT key, endpoint, state, status FROM idempotency_keys WHERE caller = $1 ORDER BY created_at', [
    caller,
  ]);
}

/** Inserts `count` completed keys for `caller` that expire at now() + `offset` (negative: expired). */
export async function seedKeys(caller: string, count: number, offset: string): Promise<void> {
  await sql(
    `INSERT INTO idempotency_keys (key, caller, endpoint, fingerprint, state, status, response_body, expires_at)
     SELECT 'k' || i, $1, 'POST /seeded', '\\x00', 'completed', 201, '\\x7b7d', now() + $3::interval
     FROM generate_series(1, $2::int) AS i`,
    [caller, count, offset],
  );
}

/** Inserts a completed outcome of `key` for `caller` on `endpoint` that expired a minute ago. */
export async function seedExpiredOutcome(key: string, caller: string, endpoint: string): Promise<void> {
  await sql(
    `INSERT INTO idempotency_keys (key, caller, endpoint, fingerprint, state, status, response_body, expires_at)
     VALUES ($1, $2, $3, '\\x00', 'completed', 201, '\\x7b7d', now() - interval '1 minute')`,
    [key, caller, endpoint],
  );
}

/**
 * Polls `condition` every 10 ms until it holds; fails after 20 s, a bound meant to be reached only
 * when the condition never comes (a machine three times slower than usual needs a few seconds).
 */
export async function until(condition: () => Promise<boolean>, what = 'the condition'): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what} did not hold within 20 s`);
    await sleep(10);
  }
}

/**
 * The pid of the one key transaction that inserted a payment and now sits idle inside its handler
 * (a handler held or sleeping after its write), once there is one.
 */
/**
 * Waits until the database's clock is past `column` (`expires_at`: the ttl; `locked_until`: the
 * lease) of every key row of `caller`: the time a ttl or a lease takes, read where it is kept.
 */
export async function untilPast(caller: string, column: 'expires_at' | 'locked_until'): Promise<void> {
  await until(
    async () =>
      (await sql(`SELECT 1 FROM idempotency_keys WHERE caller = $1 AND ${column} >= clock_timestamp()`, [caller]))
        .length === 0,
    `the ${column} of ${caller}'s keys to pass`,
  );
}

/**
 * Waits until the database's clock is past `column` of the row of `key` (`response_expires_at`: a
 * tombstone's ttl, after which its answer is gone; `expires_at`: its end).
 */
export async function untilKeyPast(key: string, column: 'expires_at' | 'response_expires_at'): Promise<void> {
  await until(
    async () =>
      (await sql(`SELECT 1 FROM idempotency_keys WHERE key = $1 AND ${column} < clock_timestamp()`, [key])).length ===
      1,
    `the ${column} of the key ${key} to pass`,
  );
}

export async function handlerBackend(): Promise<number> {
  const [pid] = await handlerBackends(1);
  return pid;
}

/**
 * The pids of the key transactions that inserted a payment and now sit idle inside their
 * handlers, once there are exactly `count` of them (as many handlers as hold pool connections).
 */
export async function handlerBackends(count: number): Promise<number[]> {
  let rows: Array<{ pid: number }> = [];
  await until(async () => {
    rows = await sql(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction' AND query LIKE 'INSERT INTO "payments"%'`,
    );
    return rows.length === count;
  }, `${count} handler transaction(s) idle after their write`);
  return rows.map(({ pid }) => pid);
}

/**
 * How many sessions hold the advisory lock of a scoped key (`endpoint` as the key rows name it,
 * `POST /payments`): 1 while a transactional holder runs, 0 once its transaction ended.
 */
export async function keyLockHolders(key: string, caller: string, endpoint: string): Promise<number> {
  const { lockId } = scopeKey(key, caller, endpoint);
  const rows = await sql(
    `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
       AND classid::bigint = ($1::bigint >> 32) & 4294967295 AND objid::bigint = $1::bigint & 4294967295`,
    [lockId],
  );
  return rows.length;
}

/**
 * A transaction of the test's own holding a SHARE lock on `table`: every handler waits at its write
 * there (its key held) until the test commits or ends the client.
 */
export async function lockTable(table: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: databaseUrl() });
  await client.connect();
  await client.query('BEGIN');
  await client.query(`LOCK TABLE ${table} IN SHARE MODE`);
  return client;
}

/**
 * How many sessions of this database wait for a lock on `table`: a test holds a table lock in a
 * transaction of its own to stop handlers at their write to it (a latch for handlers it cannot
 * change, such as the demo's).
 */
export async function waitingOnTable(table: string): Promise<number> {
  const [{ n }] = await sql<{ n: string }>(
    `SELECT count(*) AS n FROM pg_locks JOIN pg_stat_activity USING (pid)
     WHERE NOT granted AND relation = $1::regclass AND datname = current_database()`,
    [table],
  );
  return Number(n);
}

/** A database of its own on the suites' server, with none of the module's tables; `drop()` removes it. */
export async function emptyDatabase(name: string): Promise<{ url: string; drop(): Promise<void> }> {
  const database = `${name}_${process.pid}_${Date.now().toString(36)}`.toLowerCase().replace(/\W/g, '_').slice(0, 63);
  await sql(`CREATE DATABASE ${database}`);
  const url = new URL(databaseUrl());
  url.pathname = `/${database}`;
  return { url: url.href, drop: () => sql(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).then(() => undefined) };
}
