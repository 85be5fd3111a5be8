// The failover pg_auto_failover decides: its monitor and two nodes (auto-failover.mjs), the apps
// reaching the primary through the router that follows the monitor, 32 clients sending payments.
// The primary's node is SIGKILLed whole (its pg_autoctl services, its postmaster); nothing else
// is done by hand: the monitor finds it unhealthy and promotes the secondary, which pg_auto_failover
// keeps synchronous while both run, so nothing acknowledged may be lost.
import { setTimeout as sleep } from 'node:timers/promises';
import { audit, brokenPayments } from './audit.mjs';
import { FormationNotFormedError, pgAutoctl, startFormation, startFormationRouter } from './auto-failover.mjs';
import { driveClients } from './clients.mjs';
import { query, STEADY_MS, startApps } from './harness.mjs';
import { until, untilWritable } from './readiness.mjs';

/**
 * The monitor's health checks: a check a second, one retry 500 ms later, a node unhealthy after
 * 2 s without an answer (pg_auto_failover's defaults: 5 s, 2 retries 2 s apart, 20 s).
 */
const HEALTH_CHECKS = {
  health_check_period: 1000,
  health_check_timeout: 1000,
  health_check_max_retries: 1,
  health_check_retry_delay: 500,
  node_considered_unhealthy_timeout: 2000,
};

export async function autoFailover() {
  if (!pgAutoctl())
    return { 'not run': 'pg_autoctl is not installed (Debian: apt-get install postgresql-15-auto-failover)' };
  const { formation, notFormed } = await formed();
  const apps = [];
  let router;
  try {
    router = await startFormationRouter(formation);
    await startApps(`postgres://postgres@127.0.0.1:${router.port}/postgres`, apps);
    let stop;
    const stopped = new Promise((resolve) => (stop = resolve));
    const driving = driveClients({ apps, count: 32, stop: stopped });
    await sleep(STEADY_MS);
    const primaryPort = await formation.primaryPort();
    const oldPrimary = formation.nodes.find((node) => node.port === primaryPort);
    const newPrimary = formation.nodes.find((node) => node !== oldPrimary);
    // pg_auto_failover's default for two nodes: the secondary in the write quorum (ANY 1).
    const [replication] = await query(
      oldPrimary.url,
      `SELECT current_setting('synchronous_standby_names') AS names, sync_state FROM pg_stat_replication`,
    );
    if (!['sync', 'quorum'].includes(replication?.sync_state))
      throw new Error(`the secondary is not synchronous: ${JSON.stringify(replication)}`);
    const failoverAt = Date.now();
    formation.kill(oldPrimary);
    await untilPromoted(formation, newPrimary);
    const promotedAfter = (Date.now() - failoverAt) / 1000;
    await sleep(STEADY_MS);
    stop();
    const seen = await driving;
    const report = await audit(newPrimary.url, seen, failoverAt);
    delete report.lost;
    report['seconds until the monitor promoted the secondary'] = promotedAfter;
    report['synchronous_standby_names'] = replication.names;
    report['formations that did not form first'] = notFormed;
    const broken = brokenPayments(report, { strict: true });
    if (broken.length > 0) throw new Error(`${broken.join(', ')}: ${JSON.stringify(report)}`);
    return report;
  } catch (error) {
    error.message += `\n${apps.map((app) => app.output().slice(-2000)).join('\n')}\n${formation.logs()}`;
    throw error;
  } finally {
    await Promise.all(apps.map((app) => app.kill().catch(() => undefined)));
    await router?.close();
    await formation.remove();
  }
}

/**
 * A formed formation: its primary and its synchronous secondary. A formation whose secondary does
 * not join in time is removed, its monitor's view printed, and a fresh one started, once: the
 * scenario's checks all run on a formed one.
 */
async function formed() {
  for (let attempt = 0; ; attempt++) {
    const formation = await startFormation({ monitorSettings: HEALTH_CHECKS });
    try {
      await formation.start();
      return { formation, notFormed: attempt };
    } catch (error) {
      const logs = formation.logs();
      await formation.remove();
      if (!(error instanceof FormationNotFormedError) || attempt === 1) {
        error.message += `\n${logs}`;
        throw error;
      }
      console.log(`pg_auto_failover: a fresh formation: ${error.message}\n${logs.slice(-4000)}`);
    }
  }
}

/** Resolves once the monitor names `node` primary and it takes writes. */
async function untilPromoted(formation, node) {
  const named = async () => (await formation.primaryPort().catch(() => undefined)) === node.port;
  await until(named, `the monitor naming ${node.name} primary`, 120_000);
  await untilWritable(node.url);
}
