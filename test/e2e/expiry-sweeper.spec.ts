import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { IdempotencySweeper } from '../../src/index.js';
import { SWEEP_BATCH, SWEEP_LOCK_ID } from '../../src/operations/sweeper/sweep.sql.js';
import {
  handlerBackends,
  keyRows,
  paymentCount,
  seedExpiredOutcome,
  seedKeys,
  sql,
  until,
} from '../support/database.js';
import { appDatabaseUrl, appsOn, databaseUrl, HTTP_PLATFORMS } from '../support/apps.js';
import { LabController } from '../support/common-routes.controller.js';
import { newCaller, newKey, send, validPayment } from '../support/http.js';
import { release } from '../support/latch.js';
import { sentQueries } from '../support/sent-queries.js';
import { PostgresProxy, throughProxy } from '../support/postgres-proxy.js';
import { ExpiryController } from './expiry-sweeper.controller.js';

async function countKeys(caller: string): Promise<number> {
  const [{ n }] = await sql('SELECT count(*) AS n FROM idempotency_keys WHERE caller = $1', [caller]);
  return Number(n);
}

describe.each(HTTP_PLATFORMS)('on %s', (platform) => {
  const { startDemo, startLab } = appsOn(platform);

  describe('expiry', () => {
    it('an expired key is a new request even before the sweeper runs (route ttl)', async () => {
      const lab = await startLab({}, { controllers: [ExpiryController] });
      try {
        const caller = newCaller();
        const key = newKey();
        const first = await send(`${lab.url}/lab/short-ttl`, { key, caller, body: {} });
        expect((await send(`${lab.url}/lab/short-ttl`, { key, caller, body: {} })).headers['idempotent-replayed']).toBe(
          'true',
        );
        await sleep(1_100);
        const after = await send(`${lab.url}/lab/short-ttl`, { key, caller, body: {} });
        expect(after.status).toBe(201);
        expect(after.headers['idempotent-replayed']).toBeUndefined();
        expect(after.json.id).not.toBe(first.json.id);
        expect(await paymentCount(caller)).toBe(2);
        expect(await keyRows(caller)).toHaveLength(1);
      } finally {
        await lab.close();
      }
    });

    it('an expired key is a new request (module ttl, demo IDEMPOTENCY_TTL_SECONDS)', async () => {
      const demo = await startDemo({ ttlSeconds: 1 });
      try {
        const caller = newCaller();
        const key = newKey();
        await send(`${demo.url}/payments`, { key, caller, body: validPayment });
        await sleep(1_100);
        const after = await send(`${demo.url}/payments`, { key, caller, body: { amount: 1, currency: 'USD' } });
        expect(after.status).toBe(201);
        expect(after.headers['idempotent-replayed']).toBeUndefined();
        expect(await paymentCount(caller)).toBe(2);
      } finally {
        await demo.close();
      }
    });
  });

  describe('the sweeper', () => {
    it('a request whose expired row a sweep batch is deleting runs once the batch commits (not 409: the key is free)', async () => {
      const lab = await startLab({}, { controllers: [LabController] });
      const caller = newCaller();
      const key = newKey();
      await seedExpiredOutcome(key, caller, 'POST /lab/twin');
      // The sweeper's own batch, in a transaction held open: the key's row, written over the expired
      // one at the commit, waits on it.
      const sweeper = new pg.Client({ connectionString: databaseUrl() });
      await sweeper.connect();
      try {
        await sweeper.query('BEGIN');
        expect(
          (await sweeper.query(SWEEP_BATCH.text, [1000, SWEEP_LOCK_ID, null])).rows[0].deleted,
        ).toBeGreaterThanOrEqual(1);
        const request = send(`${lab.url}/lab/twin`, { key, caller, body: {} });
        await until(async () => {
          // The recording, prepared (EXECUTE …record_outcome…) or sent whole (behind a pooler).
          const waiting = await sql(
            `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
               AND (query LIKE '%record_outcome%' OR query LIKE '%INSERT INTO idempotency_keys%')`,
          );
          return waiting.length === 1;
        }, 'the key row waiting on the batch');
        await sweeper.query('COMMIT');
        const answer = await request;
        expect({ status: answer.status, type: answer.json?.type }).toEqual({ status: 201, type: undefined });
        expect(await paymentCount(caller)).toBe(1);
      } finally {
        await sweeper.end();
        await lab.close();
      }
    });

    it('deletes expired rows in batches and keeps live ones', async () => {
      const lab = await startLab({ sweepBatchSize: 400 });
      try {
        const [expired, live] = [newCaller(), newCaller()];
        await seedKeys(expired, 1_500, '-1 second');
        await seedKeys(live, 50, '1 hour');
        let result!: Awaited<ReturnType<IdempotencySweeper['sweep']>>;
        const sent = await sentQueries(async () => (result = await lab.app.get(IdempotencySweeper).sweep()));
        expect(result.ran).toBe(true);
        expect(result.deleted).toBeGreaterThanOrEqual(1_500);
        // 1,500 rows in batches of at most 400: at least 4 DELETEs (more if other rows expired).
        expect(sent.filter((text) => /\bDELETE FROM idempotency_keys\b/.test(text)).length).toBeGreaterThanOrEqual(4);
        expect(await countKeys(expired)).toBe(0);
        expect(await countKeys(live)).toBe(50);
      } finally {
        await lab.close();
      }
    });

    it('runs on one instance at a time: while another holds the sweep lock it does nothing', async () => {
      const other = new pg.Client({ connectionString: databaseUrl() });
      await other.connect();
      const lab = await startLab();
      try {
        const caller = newCaller();
        await seedKeys(caller, 10, '-1 second');
        await other.query('SELECT pg_advisory_lock($1::bigint)', [SWEEP_LOCK_ID]);
        expect(await lab.app.get(IdempotencySweeper).sweep()).toEqual({ ran: false, deleted: 0, responsesDropped: 0 });
        expect(await countKeys(caller)).toBe(10);
        await other.query('SELECT pg_advisory_unlock($1::bigint)', [SWEEP_LOCK_ID]);
        expect((await lab.app.get(IdempotencySweeper).sweep()).ran).toBe(true);
        expect(await countKeys(caller)).toBe(0);
      } finally {
        await lab.close();
        await other.end();
      }
    });

    it('two instances sweeping at once: one deletes at a time, each row once, every expired row goes', async () => {
      const [a, b] = [await startLab({ sweepBatchSize: 25 }), await startLab({ sweepBatchSize: 25 })];
      try {
        const caller = newCaller();
        await seedKeys(caller, 3_000, '-1 second');
        const results = await Promise.all([
          a.app.get(IdempotencySweeper).sweep(),
          b.app.get(IdempotencySweeper).sweep(),
        ]);
        // A run that finds a batch of the other's under way stops (ran: false when it had done nothing).
        expect(results.some((r) => r.ran)).toBe(true);
        for (const result of results) if (!result.ran) expect(result.deleted).toBe(0);
        // Other suites' expired rows may go in the same sweeps.
        expect(results[0].deleted + results[1].deleted).toBeGreaterThanOrEqual(3_000);
        expect(await countKeys(caller)).toBe(0);
      } finally {
        await a.close();
        await b.close();
      }
    });

    it('runs on its interval and stops cleanly on shutdown, finishing its batch', async () => {
      const caller = newCaller();
      await seedKeys(caller, 20_000, '-1 second');
      const lab = await startLab({ sweepInterval: 50, sweepBatchSize: 100 });
      const deadline = Date.now() + 10_000;
      while ((await countKeys(caller)) === 20_000 && Date.now() < deadline) await sleep(20);
      await lab.close();
      const left = await countKeys(caller);
      expect(left).toBeLessThan(20_000);
      // Nothing runs after close: the count no longer moves, and the lock is free.
      await sleep(300);
      expect(await countKeys(caller)).toBe(left);
      const [{ locked }] = await sql('SELECT pg_try_advisory_lock($1::bigint) AS locked', [SWEEP_LOCK_ID]);
      expect(locked).toBe(true);
      await sql('SELECT pg_advisory_unlock_all()');
      await sql('DELETE FROM idempotency_keys WHERE caller = $1', [caller]);
    });
  });
});

/**
 * A sweep over a connection that died without a word (Express only: nothing here depends on the
 * HTTP platform). The app reaches PostgreSQL through a proxy that drops its connections silently.
 */
describe('a sweep over a dying connection (express)', () => {
  const { startLab } = appsOn('express');
  const proxy = new PostgresProxy();

  beforeAll(async () => {
    await sql('SELECT 1');
    await proxy.start(new URL(appDatabaseUrl()));
  });
  afterAll(() => proxy.stop());

  it("is given up after 10 s and the next sweep runs; a stuck sweep does not hold up the app's shutdown", async () => {
    const lab = await throughProxy(proxy, () => startLab({ sweepInterval: 0 }, { controllers: [LabController] }));
    let closed = false;
    try {
      expect((await send(`${lab.url}/lab/scoped`, { key: newKey(), caller: newCaller(), body: {} })).status).toBe(201);
      await seedKeys(newCaller(), 10, '-1 minute');
      proxy.dropExisting(); // the pooled connection the sweep takes is now dead; new ones work
      const sweeper = lab.app.get(IdempotencySweeper);
      const started = Date.now();
      const stuck = await sweeper.sweep().then(
        () => 'swept',
        (error: Error) => error.message,
      );
      expect(stuck).toMatch(/did not answer within 10000 ms/);
      expect(Date.now() - started).toBeLessThan(13_000);
      expect(await sweeper.sweep()).toEqual({ ran: true, deleted: expect.any(Number), responsesDropped: 0 });

      proxy.dropExisting();
      const swallowed = proxy.swallowed;
      const again = sweeper.sweep().catch(() => undefined);
      await until(async () => proxy.swallowed > swallowed, 'the sweep sent over its dead connection');
      const closing = Date.now();
      await lab.close();
      closed = true;
      expect(Date.now() - closing).toBeLessThan(8_000);
      await again;
    } finally {
      proxy.closeDead();
      if (!closed) await lab.close();
    }
  }, 40_000);
});

describe('a sweep whose connection is lost while its batch runs, the server side included (express)', () => {
  const { startLab } = appsOn('express');
  const proxy = new PostgresProxy();

  beforeAll(async () => {
    await sql('SELECT 1');
    await proxy.start(new URL(appDatabaseUrl()));
  });
  afterAll(() => proxy.stop());

  it('does not keep the sweep lock from every instance: another instance sweeps once the lost batch ended', async () => {
    const viaProxy = await throughProxy(proxy, () => startLab({ sweepInterval: 0, sweepBatchSize: 100_000 }));
    const direct = await startLab({ sweepInterval: 0 });
    try {
      await seedKeys(newCaller(), 300_000, '-1 minute');
      const sweep = viaProxy.app
        .get(IdempotencySweeper)
        .sweep()
        .then(
          () => 'swept',
          (error: Error) => error.message,
        );
      let lost: number | undefined;
      await until(async () => {
        const [batch] = await sql<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE '%DELETE FROM idempotency_keys%'
             AND state = 'active' AND pid <> pg_backend_pid()`,
        );
        lost = batch?.pid;
        return lost !== undefined;
      }, 'a batch running');
      proxy.dropExisting({ lost: true });
      expect(await sweep).toMatch(/did not answer within 10000 ms/);
      // The lost session lives on (nothing told PostgreSQL its client is gone); its batch runs to
      // its end, which on a slow machine comes after the sweep gave up. Once it has ended, the
      // session holds no sweep lock: the lock is its transaction's.
      const stateOfLost = async () =>
        (await sql<{ state: string }>('SELECT state FROM pg_stat_activity WHERE pid = $1', [lost]))[0]?.state;
      await until(async () => (await stateOfLost()) !== 'active', 'the lost batch ending');
      expect(await stateOfLost()).toBe('idle');
      expect((await direct.app.get(IdempotencySweeper).sweep()).ran).toBe(true);
    } finally {
      await direct.close();
      proxy.closeDead();
      await viaProxy.close();
    }
  }, 90_000);
});

describe('shutdown while a sweep waits for a pool connection (express)', () => {
  const { startLab } = appsOn('express');

  it('waits 5 s at most, and the sweep sends nothing once a connection comes', async () => {
    const lab = await startLab({}, { controllers: [LabController] });
    const caller = newCaller();
    // The lab's pool has 20 connections: 20 held handlers keep them until the shutdown returned.
    const held = Array.from({ length: 20 }, () =>
      send(`${lab.url}/lab/held-write`, { key: newKey(), caller, body: {} }),
    );
    await handlerBackends(20);
    const pool = (lab.app.get(DataSource).driver as unknown as { master: pg.Pool }).master;
    const sweeper = lab.app.get(IdempotencySweeper);
    const sweep = sweeper.sweep().catch((error: Error) => error);
    await until(async () => pool.waitingCount === 1, 'the sweep waiting for a pool connection');
    const started = Date.now();
    await sweeper.beforeApplicationShutdown();
    expect(Date.now() - started).toBeLessThan(5_500);
    release(caller);
    await Promise.all(held);
    expect(await sweep).toEqual({ ran: false, deleted: 0, responsesDropped: 0 });
    await lab.close();
  }, 30_000);
});
