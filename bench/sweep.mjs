// `npm run bench:sweep`: the row-deleting sweep of the plain idempotency_keys against the
// partition drop of the partitioned one, on the same number of expired rows (BENCH_EXPIRED_ROWS,
// default 10,000,000): how long each takes to rid the table of them, and the live inserts' p99
// while each runs against their p99 just before, on the same table (8 connections, fresh keys,
// the demo's POST /payments). Each table gets its own database, module server (Node.js as in
// `npm run bench`, BENCH_NODE) and PostgreSQL state; the two runs follow each other on one machine.
// Exits 1 when a live request failed or an expired row was left.
import 'reflect-metadata';
import { setTimeout as sleep } from 'node:timers/promises';
import { nodeBinary } from '../scripts/node-lines.mjs';
import { startDatabase } from './database.mjs';
import { killAll, start } from './processes.mjs';
import { machine } from './report.mjs';

const settings = {
  expiredRows: Number(process.env.BENCH_EXPIRED_ROWS ?? 10_000_000),
  seconds: 10,
  connections: 8,
  sweepCapSeconds: 1_800,
};
const log = (message) => process.stderr.write(`bench:sweep: ${message}\n`);
const execPath = nodeBinary(process.env.BENCH_NODE || process.execPath);
const run = Date.now().toString(36);
const HOUR = 3_600_000;

/** Expired completed rows of one caller, expiring over the hours from 2 days ago: one INSERT … SELECT. */
const INSERT_EXPIRED = `
INSERT INTO idempotency_keys
  (key, caller, endpoint, fingerprint, state, status, response_headers, response_body, created_at, expires_at)
SELECT 'expired-' || i, $1, 'POST /payments', sha256(convert_to(i::text, 'UTF8')), 'completed', 201,
       '[["content-type", "application/json; charset=utf-8"]]'::jsonb,
       convert_to('{"id":"' || gen_random_uuid() || '","amount":1250,"currency":"EUR","createdAt":"2026-01-01T00:00:00.000Z"}', 'UTF8'),
       $2::timestamptz - interval '1 day' + i * ($3::float8 * interval '1 millisecond'),
       $2::timestamptz + i * ($3::float8 * interval '1 millisecond')
FROM generate_series(1, $4::int) AS i`;

async function measureTable(keyTable) {
  const database = await startDatabase({ keyTable });
  let server;
  let load;
  try {
    log(`${keyTable}: PostgreSQL ${database.version}, ${database.kind}`);
    [server, load] = await Promise.all([
      start('servers/module.mjs', {
        name: `module server (${keyTable} table)`,
        env: { DATABASE_URL: database.url },
        execPath,
      }),
      start('load.mjs', { name: 'load driver' }),
    ]);
    const url = `http://127.0.0.1:${server.ready.port}`;
    const steady = (token, seconds = settings.seconds) =>
      load.call('run', { url, connections: settings.connections, mode: 'fresh', token, seconds });
    log(`${keyTable}: warming up`);
    await steady(`bench-${run}-warmup`);

    // The expired rows span 5 hours ending a day ago; the partitioned table gets the module's own
    // hourly partitions for them, as its sweeper would have made them then.
    const [{ start: from }] = await database.sql(`SELECT date_trunc('hour', now()) - interval '31 hours' AS start`);
    if (keyTable === 'partitioned') {
      for (let hour = 0; hour < 6; hour++) {
        const lower = new Date(from.getTime() + hour * HOUR);
        const name = `idempotency_keys_p${lower.toISOString().slice(0, 10).replaceAll('-', '')}t${lower.toISOString().slice(11, 19).replaceAll(':', '')}`;
        await database.sql(
          `CREATE TABLE ${name} PARTITION OF idempotency_keys FOR VALUES FROM ('${lower.toISOString()}') TO ('${new Date(lower.getTime() + HOUR).toISOString()}')`,
        );
      }
    }
    log(`${keyTable}: inserting ${settings.expiredRows.toLocaleString('en')} expired rows`);
    const insertStarted = performance.now();
    const step = (5 * HOUR) / settings.expiredRows;
    await database.sql(INSERT_EXPIRED, [`bench-${run}-expired`, from, step, settings.expiredRows]);
    await database.sql('ANALYZE idempotency_keys');
    const insertMs = performance.now() - insertStarted;
    await database.sql('CHECKPOINT');

    log(`${keyTable}: live inserts, no sweep`);
    const alone = await steady(`bench-${run}-alone`);
    log(`${keyTable}: live inserts during the sweep`);
    const during = steady(`bench-${run}-during`, settings.sweepCapSeconds);
    await sleep(1_000);
    const sweep = await server.call('sweep');
    await load.call('stop');
    const live = await during;
    const [{ left }] = await database.sql('SELECT count(*)::int AS left FROM idempotency_keys WHERE caller = $1', [
      `bench-${run}-expired`,
    ]);
    return { keyTable, insertMs, sweep, left, alone, during: live, database };
  } finally {
    await Promise.all([server?.kill(), load?.kill()]);
    await database.stop();
  }
}

let status = 2;
const keepAlive = setInterval(() => undefined, 60_000);
try {
  const results = [];
  for (const keyTable of ['plain', 'partitioned']) results.push(await measureTable(keyTable));
  const host = await machine(results[0].database, execPath);
  const ms = (value) => (value === null ? '–' : value.toFixed(1));
  const lines = [
    `${host.date}: ${host.cpus}, ${host.memory}; Node.js ${host.node}; PostgreSQL ${host.postgres}`,
    `${settings.expiredRows.toLocaleString('en')} expired rows per table; live load: ${settings.connections} connections, fresh keys, POST /payments`,
    '',
    '| table | insert the expired rows | sweep | expired rows left | live p99 before / during the sweep (ms) | ratio | live requests during the sweep | non-2xx |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...results.map(
      ({ keyTable, insertMs, sweep, left, alone, during }) =>
        `| ${keyTable} | ${(insertMs / 1000).toFixed(1)} s | ${(sweep.ms / 1000).toFixed(2)} s (${
          keyTable === 'plain'
            ? `${sweep.deleted.toLocaleString('en')} rows deleted`
            : `${sweep.partitionsDropped} partitions dropped`
        }) | ${left} | ${ms(alone.p99)} / ${ms(during.p99)} | ${(during.p99 / alone.p99).toFixed(2)}× | ${during.responses} | ${during.non2xx + during.errors + during.timeouts} |`,
    ),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  const failed = results.some(
    ({ left, alone, during }) => left !== 0 || [alone, during].some((r) => r.non2xx + r.errors + r.timeouts > 0),
  );
  status = failed ? 1 : 0;
} catch (error) {
  log(error.stack ?? String(error));
} finally {
  killAll();
  clearInterval(keepAlive);
  process.stdout.write('', () => process.exit(status));
}
