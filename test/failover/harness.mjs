// What every failover scenario shares: the pair of clusters behind the proxy, the two demo
// processes, the failover itself, and a query on one cluster.
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { repointPgBouncer, startPgBouncer, stopPgBouncer } from '../../scripts/pgbouncer.mjs';
import { startDemoProcess } from '../support/demo-process.cjs';
import { freePorts } from './free-ports.mjs';
import { startPostgresPair } from './postgres-pair.mjs';
import { startTcpProxy } from './tcp-proxy.mjs';

/** Milliseconds of steady load before the failover, and after the new primary takes writes. */
export const STEADY_MS = Number(process.env.FAILOVER_STEADY_MS ?? 3000);

/**
 * Runs `body` with a fresh pair, the router in front of its primary, and the apps it starts;
 * removes them all after. The router is the proxy, or, given `pgbouncer` (its settings), a
 * PgBouncer in transaction mode repointed and reloaded on promotion.
 */
export async function withPair(synchronous, body, { pgbouncer } = {}) {
  const pair = await startPostgresPair({ synchronous });
  const proxy = pgbouncer
    ? await startPgBouncerRouter(pair.primary.port, pgbouncer)
    : await startTcpProxy({ target: pair.primary.port });
  const databaseUrl = `postgres://postgres@127.0.0.1:${proxy.port}/postgres`;
  const apps = [];
  try {
    return await body({ pair, proxy, databaseUrl, apps });
  } catch (error) {
    error.message += `\n${apps.map((app) => app.output().slice(-2000)).join('\n')}\n${pair.logs()}`;
    throw error;
  } finally {
    await Promise.all(apps.map((app) => app.kill().catch(() => undefined)));
    await proxy.close();
    await pair.remove();
  }
}

/**
 * A PgBouncer in front of the primary, as the proxy's stand-in: `repoint(port)` rewrites its
 * `[databases]` and reloads it; `pause()` does nothing (PgBouncer has no primary to refuse: its
 * clients get its errors until it is repointed).
 */
async function startPgBouncerRouter(target, settings) {
  const [port] = await freePorts(1);
  await startPgBouncer(`postgres://postgres@127.0.0.1:${target}/postgres`, port, 20, settings);
  return {
    port,
    pause: () => undefined,
    repoint: (to) => repointPgBouncer(port, to),
    close: () => stopPgBouncer(port),
  };
}

/** Starts the two demo processes, one at a time: the first runs the demo's migrations. */
export async function startApps(databaseUrl, apps, env = {}) {
  for (let i = 0; i < 2; i++) apps.push(await startDemoProcess({ databaseUrl, env }));
}

/**
 * The primary SIGKILLed (or, `planned`, stopped cleanly) and the standby promoted, the proxy
 * repointed at it. With `lagMs`, the standby is that far behind when the primary dies. Resolves
 * when the failover began and the new primary.
 */
export async function failOver({ pair, proxy, planned = false, lagMs = 0 }) {
  const [oldPrimary, newPrimary] = [pair.primary, pair.standby];
  let failoverAt = Date.now();
  if (planned) {
    proxy.pause();
    await pair.stop(oldPrimary);
  } else {
    const drop = lagMs > 0 ? await pair.lag(lagMs) : undefined;
    failoverAt = Date.now();
    pair.kill(oldPrimary);
    drop?.();
    proxy.pause();
    await sleep(1000); // the time a health check takes to call the primary dead
  }
  await pair.promote(newPrimary);
  // Alone, a synchronous primary would wait for a standby on every commit: as pg_auto_failover
  // does, it turns asynchronous until its standby is back.
  await query(newPrimary.url, `ALTER SYSTEM SET synchronous_standby_names = ''`);
  await query(newPrimary.url, 'SELECT pg_reload_conf()');
  proxy.repoint(newPrimary.port);
  return { failoverAt, newPrimary };
}

/** One `POST /payments` to `app` as `caller`: `body` (JSON text) under `key` (a new one by default). */
export function postPayment(app, caller, { body = JSON.stringify({ amount: 1, currency: 'EUR' }), key } = {}) {
  return fetch(`${app.url}/payments`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${caller}`,
      'content-type': 'application/json',
      'idempotency-key': key ?? crypto.randomUUID(),
    },
    body,
  });
}

/** The rows `text` selects on the cluster at `url`. */
export async function query(url, text, params = []) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, params)).rows;
  } finally {
    await client.end();
  }
}
