// The app killed with SIGKILL under load and restarted on the same port: the careful clients
// retry through the outage; no payment or refund exists twice, none is lost, no key is stuck
// in progress past its lease.
import { setTimeout as sleep } from 'node:timers/promises';
import { check, database, newCaller, newKey, postWithRetries, startDemo, stats } from '../support.mjs';
import { checkPayments, planPayments, runPayments } from '../load.mjs';

export default async function appKilled({ databaseUrl }) {
  const env = { DEMO_LATENCY_MS: '50', DEMO_PROVIDER_LATENCY_MS: '100', DEMO_LEASE_SECONDS: '2' };
  let demo = await startDemo(databaseUrl, env);
  const port = demo.port;
  const db = database(databaseUrl);
  try {
    const plan = planPayments('killed', 16);
    let done = false;
    const retriesBefore = stats.retries;
    // Lease mode too: refunds of one payment, each with its own key.
    const refundCaller = newCaller('killed-refunds');
    const setup = await postWithRetries(() => `${demo.url}/payments`, {
      key: newKey(),
      caller: refundCaller,
      body: { amount: 10_000, currency: 'EUR' },
    });
    const paymentId = setup.answer.json.id;
    const refunds = Array.from({ length: 40 }, (_, i) => ({ key: newKey(), amount: i + 1 }));
    const refunding = (async () => {
      for (const refund of refunds) {
        const { answer } = await postWithRetries(() => `${demo.url}/payments/${paymentId}/refunds`, {
          key: refund.key,
          caller: refundCaller,
          body: { amount: refund.amount },
        });
        refund.final = answer;
      }
    })();
    const paying = runPayments(
      plan,
      () => demo.url,
      () => done,
    );
    await sleep(1_000);
    await demo.kill();
    await sleep(300);
    demo = await startDemo(databaseUrl, env, port);
    await sleep(1_000);
    done = true;
    await Promise.all([paying, refunding]);
    const retries = stats.retries - retriesBefore;
    check(retries > 0, 'no client had to retry: the kill did not hit the traffic');

    const logical = await checkPayments(plan, db);
    const recorded = await db.rows('SELECT amount FROM refunds WHERE payment_id = $1', [paymentId]);
    const ledger = await db.rows('SELECT amount FROM demo_provider_refunds WHERE payment_id = $1', [paymentId]);
    for (const refund of refunds) {
      check(refund.final.status === 201, `a refund's final answer was ${refund.final.status}`);
      const rows = recorded.filter((row) => row.amount === refund.amount).length;
      const effects = ledger.filter((row) => row.amount === refund.amount).length;
      if (rows > 1 || effects > 1) stats.duplicates += Math.max(rows, effects) - 1;
      if (rows === 0) stats.lostWrites++;
    }
    check(
      recorded.length === refunds.length && ledger.length === refunds.length,
      `refunds: ${recorded.length} recorded, ${ledger.length} provider effects, ${refunds.length} asked`,
    );
    const [{ stuck }] = await db.rows(
      `SELECT count(*)::int AS stuck FROM idempotency_keys WHERE caller LIKE 'killed-%' AND state = 'in_progress'`,
    );
    check(stuck === 0, `${stuck} keys still in progress`);
    return `${logical} payments and ${refunds.length} refunds through a SIGKILL and restart (${retries} retries): each exactly once, no key stuck`;
  } finally {
    await demo.kill();
    await db.end();
  }
}
