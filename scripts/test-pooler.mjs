// `npm run test:pooler`: the concurrency, replay, lease, wait, sweeper and Prisma host suites with their apps
// behind a real PgBouncer in transaction mode with a pool of 5 server connections and the
// module's default options (APP_DATABASE_URL), and test/pooler/ (PgBouncers of its own, each
// with new server sessions). The suites' own reads and set-up go to DATABASE_URL directly; with
// no DATABASE_URL, an embedded PostgreSQL is started for the run. Needs `pgbouncer` (Debian's
// package). Arguments go to Jest.
import { spawnSync } from 'node:child_process';
import { startPgBouncer, stopPgBouncer } from './pgbouncer.mjs';

const SUITES = [
  'test/pooler/',
  'test/e2e/concurrency.spec.ts',
  'test/e2e/replay.spec.ts',
  'test/e2e/lease-mode.spec.ts',
  'test/e2e/wait-mode.spec.ts',
  'test/e2e/expiry-sweeper.spec.ts',
  'test/e2e/prisma-host.spec.ts',
];
/**
 * A test whose premise is the app's own pool saturated by 20 transactions of 8 s: behind a pool
 * of 5 server connections those run four at a time, past the test's bound.
 */
const NOT_BEHIND_A_POOLER = ['shutdown while a sweep waits for a pool connection'];

let embedded;
if (!process.env.DATABASE_URL) {
  const { startEmbeddedPostgres } = await import('../dist/esm/demo/database/embedded-postgres.js');
  embedded = await startEmbeddedPostgres();
  process.env.DATABASE_URL = embedded.url;
}
let status = 1;
try {
  const through = await startPgBouncer(process.env.DATABASE_URL);
  process.stdout.write(`PgBouncer in transaction mode (pool of 5) at ${through.replace(/:[^:@/]+@/, ':***@')}\n`);
  const skip = `^(?!.*(?:${NOT_BEHIND_A_POOLER.join('|')})).*$`;
  const jest = spawnSync(
    process.execPath,
    ['node_modules/jest/bin/jest.js', '-c', 'jest.pooler.config.mjs', '-t', skip, ...SUITES, ...process.argv.slice(2)],
    { stdio: 'inherit', env: { ...process.env, APP_DATABASE_URL: through } },
  );
  status = jest.status ?? 1;
} finally {
  await stopPgBouncer();
  await embedded?.stop();
}
process.exit(status);
