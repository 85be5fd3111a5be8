// `npm run test:failover`: a primary failover under load, with processes. Two PostgreSQL clusters
// of the machine's PostgreSQL with streaming replication (postgres-pair.mjs), the apps (two demo
// processes) reaching the primary through a proxy repointed on promotion (tcp-proxy.mjs), and 32
// clients retrying by the README's rules (clients.mjs). Each scenario reports what the clients
// saw and what the new primary holds (audit.mjs), and fails on a broken guarantee.
//   npm run test:failover                    every scenario
//   npm run test:failover -- synchronous     the named ones
import { setTimeout as sleep } from 'node:timers/promises';
import { pgbouncerBinary } from '../../scripts/pgbouncer.mjs';
import { audit, brokenPayments } from './audit.mjs';
import { autoFailover } from './auto-failover-scenario.mjs';
import { driveClients } from './clients.mjs';
import { failOver, postPayment, query, STEADY_MS, startApps, withPair } from './harness.mjs';
import { leaseFailover } from './lease-scenario.mjs';
import { postgresBin } from './postgres-pair.mjs';

const SCENARIOS = {
  /** The primary SIGKILLed, the synchronous standby promoted: nothing acknowledged is lost, nothing runs twice. */
  synchronous: () => failover({ synchronous: true, strict: true }),
  /**
   * The same with asynchronous replication and a standby 500 ms behind: what a client can see is
   * measured (acknowledged payments lost with their keys, run again when retried with their key);
   * a payment and its key are never apart.
   */
  asynchronous: () => failover({ synchronous: false, strict: false, lagMs: 500 }),
  /** A planned switchover: the primary stopped cleanly, the standby promoted: no loss at all. */
  switchover: () => failover({ synchronous: false, strict: true, planned: true }),
  /** The old primary back as a replica, and the proxy pointed at it: every write is a 503 with Retry-After, none is kept there. */
  'old-primary-as-replica': oldPrimaryAsReplica,
  /**
   * The synchronous failover with the apps behind PgBouncer (transaction mode), repointed and
   * reloaded on promotion, its `server_login_retry` at 1 s (its default, 15 s, refuses every
   * client for 15 s after one failed login to the dead primary).
   */
  pgbouncer: () =>
    pgbouncerBinary()
      ? failover({ synchronous: true, strict: true, pgbouncer: { server_login_retry: 1 } })
      : { 'not run': 'pgbouncer is not installed (Debian: apt-get install pgbouncer)' },
  /**
   * Lease mode's refunds (an effect no transaction undoes) across the synchronous failover: the
   * fencing token keeps every refund single and every recorded outcome its holder's.
   */
  lease: leaseFailover,
  /**
   * pg_auto_failover's monitor and two nodes: the primary's node SIGKILLed whole, the monitor
   * promotes the secondary on its own, the router follows it; nothing acknowledged is lost.
   */
  pg_auto_failover: autoFailover,
};

async function failover({ synchronous, strict, planned = false, lagMs = 0, env = {}, pgbouncer }) {
  return withPair(
    synchronous,
    async ({ pair, proxy, databaseUrl, apps }) => {
      await startApps(databaseUrl, apps, env);
      let stop;
      const stopped = new Promise((resolve) => (stop = resolve));
      const driving = driveClients({ apps, count: 32, stop: stopped });
      await sleep(STEADY_MS);
      const { failoverAt, newPrimary } = await failOver({ pair, proxy, planned, lagMs });
      await sleep(STEADY_MS);
      stop();
      const seen = await driving;
      const report = await audit(newPrimary.url, seen, failoverAt);
      if (report['2xx whose payment is gone'] > 0) Object.assign(report, await retryLost(apps, report.lost));
      delete report.lost;
      const broken = brokenPayments(report, { strict });
      if (broken.length > 0) throw new Error(`${broken.join(', ')}: ${JSON.stringify(report)}`);
      return report;
    },
    { pgbouncer },
  );
}

async function oldPrimaryAsReplica() {
  return withPair(true, async ({ pair, proxy, databaseUrl, apps }) => {
    await startApps(databaseUrl, apps);
    const [oldPrimary, newPrimary] = [pair.primary, pair.standby];
    pair.kill(oldPrimary);
    await pair.promote(newPrimary);
    await pair.rejoin(oldPrimary);
    // The proxy still sends writes to the old primary, now a replica (stale routing).
    proxy.repoint(oldPrimary.port);
    const answers = [];
    for (let i = 0; i < 40; i++) {
      const caller = `fo-replica-${i}-${Date.now()}`;
      const response = await postPayment(apps[i % 2], caller);
      answers.push({ status: response.status, retryAfter: response.headers.get('retry-after') });
      await response.arrayBuffer();
    }
    const statuses = {};
    for (const answer of answers) statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
    const [{ n }] = await query(
      newPrimary.url,
      `SELECT count(*)::int AS n FROM payments WHERE caller LIKE 'fo-replica-%'`,
    );
    const report = { requests: answers.length, statuses, 'payments kept': n };
    if (answers.some((answer) => answer.status !== 503 || !answer.retryAfter))
      throw new Error(`a write on the replica was not a 503 with Retry-After: ${JSON.stringify(report)}`);
    // Pointed back at the primary, the same apps write again without a restart.
    proxy.repoint(newPrimary.port);
    let recovered = false;
    for (let i = 0; i < 100 && !recovered; i++) {
      const response = await postPayment(apps[0], 'fo-replica-back');
      recovered = response.status === 201;
      await response.arrayBuffer();
      if (!recovered) await sleep(100);
    }
    if (!recovered) throw new Error('the apps did not write again once pointed back at the primary');
    return { ...report, 'writes again on the primary': recovered };
  });
}

/**
 * Sends each lost operation again with its key, to each app: how many run again (201, not a
 * replay), and how many an app answers from its replay cache (the recorded 201, whose row the
 * failover lost).
 */
async function retryLost(apps, lost) {
  let ranAgain = 0;
  let fromCache = 0;
  for (const [index, operation] of lost.entries()) {
    const response = await postPayment(apps[index % apps.length], operation.caller, {
      body: operation.body,
      key: operation.key,
    });
    if (response.status === 201 && response.headers.get('idempotent-replayed') !== 'true') ranAgain++;
    else if (response.headers.get('idempotent-replayed') === 'true') fromCache++;
    await response.arrayBuffer();
  }
  return {
    'lost 2xx run again when retried with their key': ranAgain,
    'lost 2xx replayed from an instance replay cache': fromCache,
  };
}

if (!postgresBin()) {
  console.log(
    'failover: not run: no PostgreSQL binaries on this machine (pg_ctl, initdb, pg_basebackup, pg_rewind; set PG_BIN)',
  );
  process.exit(0);
}
const only = process.argv.slice(2);
let failed = 0;
for (const [name, scenario] of Object.entries(SCENARIOS)) {
  if (only.length > 0 && !only.includes(name)) continue;
  const started = Date.now();
  try {
    const report = await scenario();
    console.log(`ok   ${name} (${((Date.now() - started) / 1000).toFixed(1)} s): ${JSON.stringify(report)}`);
  } catch (error) {
    failed++;
    console.log(`FAIL ${name} (${((Date.now() - started) / 1000).toFixed(1)} s): ${error.stack ?? error}`);
  }
}
process.exit(failed === 0 ? 0 : 1);
