// `npm run bench:tombstones`: what a tombstone costs. On each key table (plain, partitioned by
// expiry), BENCH_TOMBSTONES completed keys (default 1,000,000) of a route that keeps tombstones,
// each with the demo's POST /payments answer, all past their ttl and inside their tombstone: the
// bytes of a row with its response and as a tombstone (the row alone, `pg_column_size`; the table
// on disk after VACUUM FULL), and how long the sweeper's statement that drops the responses
// (DROP_RESPONSES_BATCH, on the partitioned table DROP_RESPONSES_BATCH_PARTITIONED, in the
// sweeper's batches of 1,000) takes over them, beside the deleting
// sweep's statement (SWEEP_BATCH) over as many rows of the plain table. Exits 1 when a response
// was left.
import { performance } from 'node:perf_hooks';
import {
  DROP_RESPONSES_BATCH,
  DROP_RESPONSES_BATCH_PARTITIONED,
  SWEEP_BATCH,
  SWEEP_LOCK_ID,
} from '../dist/esm/operations/sweeper/sweep.sql.js';
import { startDatabase } from './database.mjs';
import { machine } from './report.mjs';

const rows = Number(process.env.BENCH_TOMBSTONES ?? 1_000_000);
const BATCH = 1000;
const log = (message) => process.stderr.write(`bench:tombstones: ${message}\n`);

/**
 * Completed keys of one caller: completed over the last 2 days, a ttl of 1 day (their responses
 * past it) and a tombstone of 30 days. The answer is the demo's 201 with its content type.
 */
const INSERT_TOMBSTONES = `
INSERT INTO idempotency_keys
  (key, caller, endpoint, fingerprint, state, status, response_headers, response_body, created_at,
   completed_at, response_expires_at, expires_at)
SELECT gen_random_uuid()::text, $1, 'POST /payments', sha256(convert_to(i::text, 'UTF8')), 'completed', 201,
       '[["content-type", "application/json; charset=utf-8"]]'::jsonb,
       convert_to('{"id":"' || gen_random_uuid() || '","amount":1250,"currency":"EUR","createdAt":"2026-01-01T00:00:00.000Z"}', 'UTF8'),
       t, t, t + interval '1 day', t + interval '30 days'
FROM generate_series(1, $2::int) AS i, LATERAL (SELECT now() - interval '2 days' + i * interval '1 millisecond' * 86400000 / $2::int) AS at(t)`;

async function measure(keyTable) {
  const database = await startDatabase({ keyTable });
  try {
    log(`${keyTable}: PostgreSQL ${database.version}, ${database.kind}`);
    if (keyTable === 'partitioned')
      await database.sql(
        `CREATE TABLE idempotency_keys_bench PARTITION OF idempotency_keys FOR VALUES FROM (now() - interval '7 days') TO (now() + interval '60 days')`,
      );
    log(`${keyTable}: inserting ${rows.toLocaleString('en')} keys past their ttl, inside their tombstone`);
    await database.sql(INSERT_TOMBSTONES, ['bench-tombstones', rows]);
    await database.sql('VACUUM ANALYZE idempotency_keys');
    const size = async () => {
      await database.sql('VACUUM FULL idempotency_keys');
      const [row] = await database.sql(
        `SELECT coalesce((SELECT sum(pg_total_relation_size(relid)) FROM pg_partition_tree('idempotency_keys')),
                         pg_total_relation_size('idempotency_keys'))::bigint AS bytes,
                avg(pg_column_size(k.*))::float8 AS row_bytes
         FROM idempotency_keys AS k`,
      );
      return { tableBytes: Number(row.bytes) / rows, rowBytes: row.row_bytes };
    };
    const before = await size();
    log(`${keyTable}: dropping the responses`);
    const started = performance.now();
    let dropped = 0;
    for (;;) {
      const statement = keyTable === 'partitioned' ? DROP_RESPONSES_BATCH_PARTITIONED : DROP_RESPONSES_BATCH;
      const [{ dropped: batch }] = await database.sql(statement.text, [BATCH]);
      dropped += batch;
      if (batch < BATCH) break;
    }
    const dropMs = performance.now() - started;
    const [{ left }] = await database.sql(
      'SELECT count(*)::int AS left FROM idempotency_keys WHERE response_body IS NOT NULL',
    );
    const after = await size();
    let deleteMs = null;
    if (keyTable === 'plain') {
      log(`${keyTable}: deleting as many rows with the row-deleting sweep, for comparison`);
      await database.sql(`UPDATE idempotency_keys SET expires_at = now() - interval '1 hour'`);
      await database.sql('VACUUM ANALYZE idempotency_keys');
      const deleting = performance.now();
      let last = null;
      for (;;) {
        const [result] = await database.sql(SWEEP_BATCH.text, [BATCH, SWEEP_LOCK_ID, last]);
        last = result.last ?? last;
        if (result.deleted < BATCH) break;
      }
      deleteMs = performance.now() - deleting;
    }
    return { keyTable, before, after, dropped, dropMs, left, deleteMs, database };
  } finally {
    await database.stop();
  }
}

let status = 2;
try {
  const results = [];
  for (const keyTable of ['plain', 'partitioned']) results.push(await measure(keyTable));
  const host = await machine(results[0].database);
  const bytes = (value) => Math.round(value).toLocaleString('en');
  const lines = [
    `${host.date}: ${host.cpus}, ${host.memory}; Node.js ${host.node}; PostgreSQL ${host.postgres}`,
    `${rows.toLocaleString('en')} completed keys past their ttl per table, each with the demo's POST /payments answer`,
    '',
    '| table | row with its response / as a tombstone (bytes) | table and indexes per key, with / without (bytes) | drop the responses | per 1,000 keys | responses left | delete as many rows (plain sweep) |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...results.map(
      ({ keyTable, before, after, dropped, dropMs, left, deleteMs }) =>
        `| ${keyTable} | ${bytes(before.rowBytes)} / ${bytes(after.rowBytes)} | ${bytes(before.tableBytes)} / ${bytes(after.tableBytes)} | ${(dropMs / 1000).toFixed(1)} s (${dropped.toLocaleString('en')}) | ${((dropMs / dropped) * 1000).toFixed(1)} ms | ${left} | ${deleteMs === null ? '– (partitions dropped whole)' : `${(deleteMs / 1000).toFixed(1)} s`} |`,
    ),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  status = results.some(({ left, dropped }) => left !== 0 || dropped !== rows) ? 1 : 0;
} catch (error) {
  log(error.stack ?? String(error));
} finally {
  process.stdout.write('', () => process.exit(status));
}
