import { Controller, Headers, Post, Req, UseGuards } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { Idempotent } from '../../src/index.js';
import { type AuthenticatedRequest, BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
import { handlerBackends, sql, until } from '../support/database.js';
import { appDatabaseUrl, appsOn, type RunningApp } from '../support/apps.js';
import { newCaller, newKey, send } from '../support/http.js';
import { entered, entries, hold, release } from '../support/latch.js';
import { PostgresProxy, throughProxy } from '../support/postgres-proxy.js';
import { LabController } from '../support/common-routes.controller.js';
import { DatabaseTroubleController } from './database-trouble.controller.js';

const runs = new Map<string, number>();

@Controller('renewal')
@UseGuards(BearerAuthGuard)
class RenewalController {
  /** Lease mode, 3 s lease renewed every second: holds until the test releases the caller's latch. */
  @Post('lease-held')
  @Idempotent({ mode: 'lease', lease: '3s' })
  async leaseHeld(@Headers('idempotency-key') key: string, @Req() request: AuthenticatedRequest): Promise<object> {
    const attempt = (runs.get(key) ?? 0) + 1;
    runs.set(key, attempt);
    await hold(request.user.id);
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

/** When the lease of the caller's key in progress ends (`locked_until` in epoch ms; 0 without one). */
async function leaseEnd(caller: string): Promise<number> {
  const [row] = await sql(
    `SELECT extract(epoch FROM locked_until) * 1000 AS until FROM idempotency_keys WHERE caller = $1 AND state = 'in_progress'`,
    [caller],
  );
  return Number(row?.until ?? 0);
}

/** Waits until the lease of the caller's key ends later than `after`: it was renewed since. */
function renewedAfter(caller: string, after: number, what: string): Promise<void> {
  return until(async () => (await leaseEnd(caller)) > after, what);
}

/** How many of the caller's keys in progress have been renewed once at least (a lease of 3 s). */
async function renewedKeys(caller: string): Promise<number> {
  const [{ n }] = await sql(
    `SELECT count(*) AS n FROM idempotency_keys WHERE caller = $1 AND state = 'in_progress' AND locked_until > created_at + interval '3 seconds'`,
    [caller],
  );
  return Number(n);
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
    const holder = send(`${a.url}/renewal/lease-held`, { key, caller, body: {} }).catch((error: Error) => error);
    await entered(caller);
    await renewedAfter(caller, await leaseEnd(caller), 'the first renewal');
    const renewed = await leaseEnd(caller);
    const swallowed = proxy.swallowed;
    proxy.dropExisting(); // the pooled connection A's next renewal will use is now dead; new ones work
    await until(async () => proxy.swallowed > swallowed, 'a renewal sent over the dead connection');
    await renewedAfter(caller, renewed, 'a renewal after the one that hung');
    // A is alive, PostgreSQL has been reachable all along for new connections.
    const [row] = await sql(
      `SELECT locked_until > now() AS leased FROM idempotency_keys WHERE caller = $1 AND key = $2`,
      [caller, key],
    );
    const duplicate = await send(`${b.url}/renewal/lease-held`, { key, caller, body: {} });
    release(caller);
    const first = await holder;
    proxy.closeDead();
    expect({
      leaseStillRunning: row.leased,
      duplicate: duplicate.status,
      first: (first as { status?: number }).status,
      runs: runs.get(key),
    }).toEqual({
      leaseStillRunning: true,
      duplicate: 409,
      first: 201,
      runs: 1,
    });
  });

  it('recording the outcome over a connection that died without a word: given up after a third of the lease, the client gets a 503', async () => {
    const caller = newCaller();
    const key = newKey();
    const holder = send(`${a.url}/renewal/lease-held`, { key, caller, body: {} });
    await entered(caller);
    // The first renewal leaves its connection idle in the module's own pool, for the recording.
    await renewedAfter(caller, await leaseEnd(caller), 'the first renewal');
    proxy.dropExisting(); // the pooled connections A records with are now dead; new ones work
    const released = Date.now();
    release(caller);
    const first = await Promise.race([holder, sleep(8_000).then(() => undefined)]);
    const waitedMs = Date.now() - released;
    proxy.closeDead(); // A's pool drops them, so that the next test starts on working connections
    await sleep(100);
    expect({ status: first?.status, type: first?.json?.type, runs: runs.get(key) }).toEqual({
      status: 503,
      type: 'urn:nestjs-pg-idempotency:store-unavailable',
      runs: 1,
    });
    expect(waitedMs).toBeLessThan(4_500);
    // The outcome never reached PostgreSQL: the lease still stands, so a duplicate gets 409.
    const duplicate = await send(`${b.url}/renewal/lease-held`, { key, caller, body: {} });
    expect(duplicate.status).toBe(409);
  });

  it('statements given up are not kept: after the lease connections died silently three times over, lease requests still get their answers', async () => {
    for (let round = 0; round < 3; round += 1) {
      const caller = newCaller();
      let answered = 0;
      const holders = Array.from({ length: 8 }, () =>
        send(`${a.url}/renewal/lease-held`, { key: newKey(), caller, body: {} }).finally(() => (answered += 1)),
      );
      // Each holder is in its handler and renewed once (or was given up, reserving over a
      // connection the round before left dead); then their connections die under them.
      await until(
        async () => entries(caller) + answered === 8 && (await renewedKeys(caller)) === entries(caller),
        'the holders in their handlers, renewed',
      );
      proxy.dropExisting();
      release(caller);
      // Each statement sent over a dead connection, or left waiting for one, is given up after a
      // third of the lease (503); one on a connection opened meanwhile records (201).
      const statuses = (await Promise.all(holders)).map((answer) => answer.status);
      expect(statuses.every((status) => status === 201 || status === 503)).toBe(true);
    }
    // The pool still holds idle connections that died: each request sent over one is given up
    // after a third of the lease (503) and its connection destroyed, so a wave of requests clears
    // them, and none stays checked out.
    const wave = await Promise.all(
      Array.from({ length: 24 }, () =>
        send(`${a.url}/renewal/lease-short`, { key: newKey(), caller: newCaller(), body: {} }),
      ),
    );
    expect(wave.every((answer) => answer.status === 201 || answer.status === 503)).toBe(true);
    const later = await Promise.race([
      send(`${a.url}/renewal/lease-short`, { key: newKey(), caller: newCaller(), body: {} }),
      sleep(8_000).then(() => undefined),
    ]);
    proxy.closeDead();
    expect(later?.status).toBe(201);
  });

  it("a busy pool does not starve the renewals: the app's requests hold every connection past a whole lease, the holder keeps its key", async () => {
    const caller = newCaller();
    const key = newKey();
    const holder = send(`${b.url}/renewal/lease-held`, { key, caller, body: {} });
    await entered(caller);
    const busyCaller = newCaller();
    const busy = Array.from({ length: 24 }, () =>
      send(`${b.url}/lab/held-write`, { key: newKey(), caller: busyCaller, body: {} }),
    );
    await handlerBackends(20); // every connection of B's pool is held
    await sleep(3_300); // a whole lease (3 s) with B's pool busy
    const duplicate = await send(`${a.url}/renewal/lease-held`, { key, caller, body: {} });
    release(caller);
    const first = await holder;
    release(busyCaller);
    await Promise.all(busy);
    expect({ duplicate: duplicate.status, first: first.status, runs: runs.get(key) }).toEqual({
      duplicate: 409,
      first: 201,
      runs: 1,
    });
  });

  it('a reservation that gets no connection within a third of the lease: 503, nothing reserved, the connection it waited for not kept', async () => {
    const lab = await startLab({}, { controllers: [LabController, DatabaseTroubleController] });
    let closed = false;
    try {
      const busyCaller = newCaller();
      const busy = Array.from({ length: 20 }, () =>
        send(`${lab.url}/lab/held-write`, { key: newKey(), caller: busyCaller, body: {} }),
      );
      // Every pool connection is taken: 20 handlers sit in their transactions after their write.
      await handlerBackends(20);
      const caller = newCaller();
      const refused = await Promise.all(
        Array.from({ length: 5 }, () => send(`${lab.url}/lab/lease-held-write`, { key: newKey(), caller, body: {} })),
      );
      expect(refused.map((answer) => answer.status)).toEqual([503, 503, 503, 503, 503]);
      release(busyCaller);
      await Promise.all(busy);
      await sleep(300);
      expect(await sql('SELECT key FROM idempotency_keys WHERE caller = $1', [caller])).toEqual([]);
      const later = await Promise.all(
        Array.from({ length: 20 }, () =>
          send(`${lab.url}/lab/scoped`, { key: newKey(), caller: newCaller(), body: {} }),
        ),
      );
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
    const holder = send(`${a.url}/renewal/lease-held`, { key, caller, body: {} });
    await entered(caller);
    const enteredAt = Date.now();
    const reserved = await leaseEnd(caller);
    const refused = proxy.refused;
    // The outage lasts until the first renewal was refused its connection.
    await proxy.outage(() => until(async () => proxy.refused > refused, 'a renewal refused during the outage'));
    await renewedAfter(caller, reserved, 'a renewal after the outage');
    await sleep(Math.max(0, enteredAt + 3_300 - Date.now())); // past the first lease (3 s from the reservation)
    const duplicate = await send(`${b.url}/renewal/lease-held`, { key, caller, body: {} });
    release(caller);
    const first = await holder;
    expect({ duplicate: duplicate.status, first: first.status, runs: runs.get(key) }).toEqual({
      duplicate: 409,
      first: 201,
      runs: 1,
    });
  });
});
