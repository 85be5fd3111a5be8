// `npm run test:partitioned`: the scenario suites, and test/partitioned/, on the opt-in key table
// partitioned by expiry (CreatePartitionedIdempotencyKeys1795996800000), in a database of their
// own on DATABASE_URL's server (created afresh, dropped after), or on an embedded PostgreSQL when
// DATABASE_URL is not set. Arguments go to Jest; paths among them run instead of the suites.
import { spawnSync } from 'node:child_process';
import pg from 'pg';

/** The suites whose scenarios hold on either table: exactly once, replays, leases, waits, expiry. */
const SUITES = [
  'test/partitioned/',
  'test/e2e/concurrency.spec.ts',
  'test/e2e/duplicate-storm.spec.ts',
  'test/e2e/replay.spec.ts',
  'test/e2e/hosts.spec.ts',
  'test/e2e/failure-policy.spec.ts',
  'test/e2e/lease-mode.spec.ts',
  'test/e2e/wait-mode.spec.ts',
  'test/e2e/short-ttl.spec.ts',
  'test/e2e/scope.spec.ts',
  'test/e2e/handler-transaction.spec.ts',
  'test/e2e/processes.spec.ts',
  'test/e2e/protected-storage.spec.ts',
  'test/e2e/tombstones.spec.ts',
  'test/e2e/tombstone-life.spec.ts',
];

/** A test of the row-deleting sweeper: on this table the sweeper drops partitions (test/partitioned/). */
const NOT_ON_PARTITIONS = [
  'sweep only while no one else holds the sweep lock, then until every expired row is gone',
  'the sweeper deletes expired digested rows',
  'without a tombstone, a row past its ttl is a new request, and the sweep deletes it',
];

let embedded;
let admin;
const name = `idempotency_partitioned_${process.pid}`;
let status = 1;
try {
  if (!process.env.DATABASE_URL) {
    const { startEmbeddedPostgres } = await import('../dist/esm/demo/database/embedded-postgres.js');
    embedded = await startEmbeddedPostgres();
    process.env.DATABASE_URL = embedded.url;
  }
  admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(process.env.DATABASE_URL);
  url.pathname = `/${name}`;
  const args = process.argv.slice(2);
  const suites = args.some((arg) => !arg.startsWith('-')) ? [] : SUITES;
  const skip = `^(?!.*(?:${NOT_ON_PARTITIONS.join('|')})).*$`;
  const jest = spawnSync(
    process.execPath,
    ['node_modules/jest/bin/jest.js', '-c', 'jest.partitioned.config.mjs', '-t', skip, ...suites, ...args],
    {
      stdio: 'inherit',
      env: { ...process.env, DATABASE_URL: url.href, IDEMPOTENCY_KEY_TABLE: 'partitioned' },
    },
  );
  status = jest.status ?? 1;
} finally {
  await admin?.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
  await admin?.end();
  await embedded?.stop();
}
process.exit(status);
