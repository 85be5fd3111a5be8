// PostgreSQL restarted while 32 clients send payments with retries (the same key per logical
// payment): afterwards every logical payment exists exactly once and every client's final
// answer is the recorded one.
import { setTimeout as sleep } from 'node:timers/promises';
import { check, database, startDemo, stats } from '../support.mjs';
import { checkPayments, planPayments, runPayments } from '../load.mjs';

export default async function postgresRestart({ startEmbeddedPostgres }) {
  const postgres = await startEmbeddedPostgres();
  const demo = await startDemo(postgres.url, { DEMO_LATENCY_MS: '20', DEMO_POOL_TIMEOUT_MS: '1000' });
  const db = database(postgres.url);
  try {
    const plan = planPayments('restart', 32);
    let done = false;
    const retriesBefore = stats.retries;
    const paying = runPayments(
      plan,
      () => demo.url,
      () => done,
    );
    await sleep(1_000);
    await postgres.restart();
    await sleep(1_500);
    done = true;
    await paying;
    const retries = stats.retries - retriesBefore;
    check(retries > 0, 'no client had to retry: the restart did not hit the traffic');
    const logical = await checkPayments(plan, db);
    return `${logical} logical payments from 32 clients across a PostgreSQL restart (${retries} retries): each exactly once, every final answer the recorded one`;
  } finally {
    await demo.kill();
    await db.end();
    await postgres.stop();
  }
}
