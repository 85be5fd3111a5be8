// `npm run test:faults`: real failures against real processes on loopback, each bounded in time.
// Uses DATABASE_URL when set, else an embedded PostgreSQL; the restart scenario always starts its
// own embedded PostgreSQL, since it stops and starts the server.
import { setTimeout as sleep } from 'node:timers/promises';
import { stats } from './support.mjs';

const SCENARIOS = ['hostile-input', 'pool-exhausted', 'statement-timeout', 'app-killed', 'postgres-restart'];
const only = process.argv.slice(2);

const { startEmbeddedPostgres } = await import('../../dist/esm/demo/database/embedded-postgres.js');
const embedded = process.env.DATABASE_URL ? undefined : await startEmbeddedPostgres();
const databaseUrl = process.env.DATABASE_URL ?? embedded.url;
let passed = 0;
let failed = 0;
try {
  for (const name of SCENARIOS.filter((s) => only.length === 0 || only.includes(s))) {
    const started = Date.now();
    const { default: scenario } = await import(`./scenarios/${name}.mjs`);
    try {
      const summary = await Promise.race([
        scenario({ databaseUrl, startEmbeddedPostgres }),
        sleep(180_000).then(() => Promise.reject(new Error('timed out after 180 s'))),
      ]);
      passed++;
      console.log(`ok   ${name} (${((Date.now() - started) / 1000).toFixed(1)} s): ${summary}`);
    } catch (error) {
      failed++;
      console.log(`FAIL ${name} (${((Date.now() - started) / 1000).toFixed(1)} s): ${error.stack ?? error}`);
    }
  }
} finally {
  await embedded?.stop();
}
console.log(
  `\nfaults: ${passed + failed} scenarios run, ${stats.requests} requests sent (${stats.retries} retries), ` +
    `${stats.duplicates} duplicates found, ${stats.lostWrites} lost writes`,
);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 && stats.duplicates === 0 && stats.lostWrites === 0 ? 0 : 1);
