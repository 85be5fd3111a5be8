import { Controller, Headers, Post, UseGuards } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { Idempotent } from '../../src/index.js';
import { BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
import { sql, until } from '../support/database.js';
import { appDatabaseUrl, appsOn, type RunningApp } from '../support/apps.js';
import { newCaller, newKey, send } from '../support/http.js';
import { PostgresProxy, throughProxy } from '../support/postgres-proxy.js';
import { LabController } from '../support/common-routes.controller.js';
import { DatabaseTroubleController } from './database-trouble.controller.js';

const runs = new Map<string, number>();

@Controller('renewal')
@UseGuards(BearerAuthGuard)
class RenewalController {
  /** Lease mode, 3 s lease renewed every second, 6 s of work. */
  @Post('lease-long')
  @Idempotent({ mode: 'lease', lease: '3s' })
  async leaseLong(@Headers('idempotency-key') key: string): Promise<object> {
    const attempt = (runs.get(key) ?? 0) + 1;
    runs.set(key, attempt);
    await sleep(6_000);
    return { attempt };
  }

  /** Lease mode, 3 s lease renewed every second, 1.5 s of work. */
  @Post('lease-short')
  @Idempotent({ mode: 'lease', lease: '3s' })
  async leaseShort(@Headers('idempotency-key') key: string): Promise<object> {
    const attempt = (runs.get(key) ?? 0) + 1;
    runs.set(key, attempt);
    await sleep(1_500);
    return { attempt };
  }
}

/**
 * Lease renewals when instance A's connections to PostgreSQL die (Express only: nothing here
 * depends on the HTTP platform). A reaches PostgreSQL through a TCP proxy; B directly.
 */
describe('lease renewals over dying connections (express)', () => {
  const { startLab } = appsOn('express');
  const proxy = new PostgresProxy();
  let a: RunningApp;
  let b: RunningApp;

  beforeAll(async () => {
    await sql('SELECT 1'); // the test's own pool, on the real address
    await proxy.start(new URL(appDatabaseUrl()));
    a = await throughProxy(proxy, () => startLab({}, { controllers: [RenewalController, LabController] })); // instance A reaches PostgreSQL through the proxy
    b = await startLab({}, { controllers: [RenewalController, LabController] }); // instance B directly
  });
  afterAll(async () => {
    await proxy.stop();
    await Promise.all([a.close().catch(() => undefined), b.close()]);
  });

  it('after one renewal hangs, the next thirds still renew on a working connection: the holder keeps its key', async () => {
    const caller = newCaller();
    const key = newKey();
    const holder = send(`${a.url}/renewal/lease-long`, { key, caller, body: {} }).catch((error: Error) => error);
    await sleep(500);
    proxy.dropExisting(); // the pooled connection A's first renewal will use is now dead; new ones work
    await sleep(3_300);
    // t = 3.8 s: A is alive, PostgreSQL has been reachable all along for new connections.
    const [row] = await sql(`SELECT locked_until > now() AS leased FROM idempotency_keys WHERE caller = $1 AND key = $2`, [caller, key]);
    const duplicate = await send(`${b.url}/renewal/lease-long`, { key, caller, body: {} });
    const first = await holder;
    proxy.closeDead();
    expect({ leaseStillRunning: row.leased, duplicate: duplicate.status, first: (first as { status?: number }).status, runs: runs.get(key) }).toEqual({
      leaseStillRunning: true,
      duplicate: 409,
      first: 201,
      runs: 1,
    });
  });

  it('recording the outcome over a connection that died without a word: given up after a third of the lease, the client gets a 503', async () => {
    const caller = newCaller();
    const key = newKey();
    const started = Date.now();
    const holder = send(`${a.url}/renewal/lease-short`, { key, caller, body: {} });
    await sleep(1_200); // after the first renewal (1 s), before the handler returns (1.5 s)
    proxy.dropExisting(); // the pooled connections A records with are now dead; new ones work
    const first = await Promise.race([holder, sleep(8_000).then(() => undefined)]);
    const waitedMs = Date.now() - started;
    proxy.closeDead(); // A's pool drops them, so that the next test starts on working connections
    await sleep(100);
    expect({ status: first?.status, type: first?.json?.type, runs: runs.get(key) }).toEqual({
      status: 503,
      type: 'urn:nestjs-pg-idempotency:store-unavailable',
      runs: 1,
    });
    expect(waitedMs).toBeLessThan(6_000);
    // The outcome never reached PostgreSQL: the lease still stands, so a duplicate gets 409.
    const duplicate = await send(`${b.url}/renewal/lease-short`, { key, caller, body: {} });
    expect(duplicate.status).toBe(409);
  });

  it('statements given up are not kept: after the lease connections died silently three times over, lease requests still get their answers', async () => {
    for (let round = 0; round < 3; round += 1) {
      const caller = newCaller();
      const holders = Array.from({ length: 8 }, () => send(`${a.url}/renewal/lease-short`, { key: newKey(), caller, body: {} }));
      await sleep(1_200);
      proxy.dropExisting();
      const statuses = (await Promise.all(holders)).map((answer) => answer.status);
      expect(statuses.every((status) => status === 201 || status === 503)).toBe(true);
    }
    // The pool still holds idle connections that died: each request sent over one is given up
    // after a third of the lease (503) and its connection destroyed, so a wave of requests clears
    // them, and none stays checked out.
    const wave = await Promise.all(Array.from({ length: 24 }, () => send(`${a.url}/renewal/lease-short`, { key: newKey(), caller: newCaller(), body: {} })));
    expect(wave.every((answer) => answer.status === 201 || answer.status === 503)).toBe(true);
    const later = await Promise.race([send(`${a.url}/renewal/lease-short`, { key: newKey(), caller: newCaller(), body: {} }), sleep(8_000).then(() => undefined)]);
    proxy.closeDead();
    expect(later?.status).toBe(201);
  });

  it('a busy pool does not starve the renewals: the app\'s requests hold every connection for 5 s, the holder keeps its key', async () => {
    const caller = newCaller();
    const key = newKey();
    const holder = send(`${b.url}/renewal/lease-long`, { key, caller, body: {} });
    await sleep(200);
    const busy = Array.from({ length: 24 }, () => send(`${b.url}/lab/slow-write`, { key: newKey(), caller: newCaller(), body: {}, headers: { 'x-work-ms': '5000' } }));
    await sleep(3_600);
    const duplicate = await send(`${a.url}/renewal/lease-long`, { key, caller, body: {} });
    const first = await holder;
    await Promise.all(busy);
    expect({ duplicate: duplicate.status, first: first.status, runs: runs.get(key) }).toEqual({ duplicate: 409, first: 201, runs: 1 });
  });

  it('a reservation that gets no connection within a third of the lease: 503, nothing reserved, the connection it waited for not kept', async () => {
    const lab = await startLab({}, { controllers: [LabController, DatabaseTroubleController] });
    let closed = false;
    try {
      const busy = Array.from({ length: 20 }, () =>
        send(`${lab.url}/lab/slow-write`, { key: newKey(), caller: newCaller(), body: {}, headers: { 'x-work-ms': '4000' } }),
      );
      // Every pool connection is taken: 20 handlers sit in their transactions after their write.
      await until(async () => {
        const [{ n }] = await sql(`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database()
          AND state = 'idle in transaction' AND query LIKE 'INSERT INTO "payments"%'`);
        return Number(n) === 20;
      }, 'the 20 slow writes holding every pool connection');
      const caller = newCaller();
      const refused = await Promise.all(Array.from({ length: 5 }, () => send(`${lab.url}/lab/lease-slow-write`, { key: newKey(), caller, body: {}, headers: { 'x-work-ms': '10' } })));
      expect(refused.map((answer) => answer.status)).toEqual([503, 503, 503, 503, 503]);
      await Promise.all(busy);
      await sleep(300);
      expect(await sql('SELECT key FROM idempotency_keys WHERE caller = $1', [caller])).toEqual([]);
      const later = await Promise.all(Array.from({ length: 20 }, () => send(`${lab.url}/lab/slow-write`, { key: newKey(), caller: newCaller(), body: {}, headers: { 'x-work-ms': '10' } })));
      expect(later.every((answer) => answer.status === 201)).toBe(true);
      const closing = lab.close().then(() => (closed = true));
      await Promise.race([closing, sleep(5_000)]);
      expect(closed).toBe(true);
    } finally {
      if (!closed) {
        proxy.closeDead();
        void lab.close().catch(() => undefined);
      }
    }
  });

  it('a brief outage that cuts connections: the failed renewal is retried at the next third; the holder keeps its key', async () => {
    const caller = newCaller();
    const key = newKey();
    const holder = send(`${a.url}/renewal/lease-long`, { key, caller, body: {} });
    await sleep(500);
    await proxy.outage(1_200);
    await sleep(2_100);
    const duplicate = await send(`${b.url}/renewal/lease-long`, { key, caller, body: {} });
    const first = await holder;
    expect({ duplicate: duplicate.status, first: first.status, runs: runs.get(key) }).toEqual({ duplicate: 409, first: 201, runs: 1 });
  });
});
