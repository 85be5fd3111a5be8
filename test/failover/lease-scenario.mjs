// Lease mode across a failover: 32 clients refund against payments of their own through the
// demo's lease-mode route (`POST /payments/:id/refunds`: a provider call no transaction undoes,
// keyed by a key derived from the request's), while the synchronous primary is SIGKILLed and its
// standby promoted. The lease (2 s) is shorter than the outage, so retries take over keys whose
// holders lost their connections; the fencing token keeps an old holder from recording over them.
import { setTimeout as sleep } from 'node:timers/promises';
import { answersReport, brokenAnswers } from './audit.mjs';
import { driveClients } from './clients.mjs';
import { failOver, postPayment, query, STEADY_MS, startApps, withPair } from './harness.mjs';

const CLIENTS = 32;

export async function leaseFailover() {
  return withPair(true, async ({ pair, proxy, databaseUrl, apps }) => {
    await startApps(databaseUrl, apps, { DEMO_LEASE_SECONDS: '2', DEMO_PROVIDER_LATENCY_MS: '100' });
    const stamp = Date.now();
    const callers = Array.from({ length: CLIENTS }, (_, index) => `fo-lease-${index}-${stamp}`);
    const payments = await Promise.all(callers.map((caller, index) => createPayment(apps[index % 2], caller)));
    let stop;
    const stopped = new Promise((resolve) => (stop = resolve));
    const driving = driveClients({
      apps,
      count: CLIENTS,
      stop: stopped,
      target: {
        path: (index) => `/payments/${payments[index]}/refunds`,
        caller: (index) => callers[index],
        body: () => JSON.stringify({ amount: 1 }),
      },
    });
    await sleep(STEADY_MS);
    const { failoverAt, newPrimary } = await failOver({ pair, proxy });
    await sleep(STEADY_MS);
    stop();
    const seen = await driving;
    const report = {
      ...answersReport(seen, failoverAt),
      ...(await auditRefunds(newPrimary.url, seen, stamp)),
      'outcomes refused by the fencing token': apps
        .map((app) => app.output().match(/lease was taken over|taken over by another request/g)?.length ?? 0)
        .reduce((a, b) => a + b, 0),
    };
    const broken = brokenAnswers(report);
    if (report['refunds no 2xx carries'] > 0) broken.push('a refund run twice');
    if (report['2xx whose refund is gone'] > 0) broken.push('an acknowledged refund lost');
    if (report['callers whose completed keys and refunds differ'] > 0) broken.push('a refund apart from its key');
    if (broken.length > 0) throw new Error(`${broken.join(', ')}: ${JSON.stringify(report)}`);
    return report;
  });
}

async function createPayment(app, caller) {
  const response = await postPayment(app, caller, { body: JSON.stringify({ amount: 50_000, currency: 'EUR' }) });
  if (response.status !== 201) throw new Error(`creating a payment: ${response.status} ${await response.text()}`);
  return (await response.json()).id;
}

/** The refunds, keys and provider calls the new primary holds for this run's callers. */
async function auditRefunds(url, { operations }, stamp) {
  const pattern = `fo-lease-%-${stamp}`;
  const refunds = await query(
    url,
    `SELECT r.id, p.caller FROM refunds r JOIN payments p ON p.id = r.payment_id WHERE p.caller LIKE $1`,
    [pattern],
  );
  const keys = await query(
    url,
    `SELECT caller, count(*)::int AS n FROM idempotency_keys
     WHERE caller LIKE $1 AND endpoint LIKE '%refunds' AND state = 'completed' AND status = 201 GROUP BY caller`,
    [pattern],
  );
  const [provider] = await query(
    url,
    `SELECT count(*)::int AS calls, count(*) FILTER (WHERE d.calls > 1)::int AS again
     FROM demo_provider_refunds d JOIN payments p ON p.id = d.payment_id WHERE p.caller LIKE $1`,
    [pattern],
  );
  const answered = new Set(operations.filter((operation) => operation.status === 201).map((operation) => operation.id));
  const kept = new Set(refunds.map((refund) => refund.id));
  const refundsPerCaller = new Map();
  for (const { caller } of refunds) refundsPerCaller.set(caller, (refundsPerCaller.get(caller) ?? 0) + 1);
  const keysPerCaller = new Map(keys.map((row) => [row.caller, row.n]));
  const callers = new Set([...refundsPerCaller.keys(), ...keysPerCaller.keys()]);
  return {
    refunds: refunds.length,
    'refunds no 2xx carries': refunds.filter((refund) => !answered.has(refund.id)).length,
    '2xx whose refund is gone': [...answered].filter((id) => !kept.has(id)).length,
    'callers whose completed keys and refunds differ': [...callers].filter(
      (caller) => (refundsPerCaller.get(caller) ?? 0) !== (keysPerCaller.get(caller) ?? 0),
    ).length,
    'provider calls': provider.calls,
    'provider calls made again for one key (absorbed by its key)': provider.again,
  };
}
