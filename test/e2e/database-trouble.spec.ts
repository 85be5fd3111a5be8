import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource } from 'typeorm';
import { keyRows, paymentCount, sql } from '../support/database.js';
import { appsOn, HTTP_PLATFORMS, databaseUrl, type RunningApp } from '../support/apps.js';
import { newCaller, newKey, send } from '../support/http.js';

/** Waits until a transaction that inserted a payment for `caller`… sits idle inside the handler. */
async function handlerBackend(): Promise<number> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const rows = await sql(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction' AND query LIKE 'INSERT INTO "payments"%'`,
    );
    if (rows.length === 1) return rows[0].pid;
    if (Date.now() > deadline) throw new Error(`expected one handler transaction, found ${rows.length}`);
    await sleep(10);
  }
}

describe.each(HTTP_PLATFORMS)('on %s', (platform) => {
  const { startLab } = appsOn(platform);

  describe('database trouble', () => {
    let lab: RunningApp;
    beforeAll(async () => (lab = await startLab()));
    afterAll(() => lab.close());

    it('the connection lost mid-request: 503 store-unavailable, the write undone, the key free', async () => {
      const caller = newCaller();
      const key = newKey();
      const answer = send(`${lab.url}/lab/slow-write`, { key, caller, body: {} });
      await sql('SELECT pg_terminate_backend($1)', [await handlerBackend()]);
      const failed = await answer;
      expect(failed.status).toBe(503);
      expect(failed.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(failed.json).toMatchObject({ type: 'urn:nestjs-pg-idempotency:store-unavailable', status: 503 });
      expect(await paymentCount(caller)).toBe(0);
      expect(await keyRows(caller)).toEqual([]);

      const retry = await send(`${lab.url}/lab/slow-write`, { key, caller, body: {} });
      expect(retry.status).toBe(201);
      expect(await paymentCount(caller)).toBe(1);
    });

    it('a client that disconnects mid-request: the write is rolled back once the handler ends, the key is free', async () => {
      const caller = newCaller();
      const key = newKey();
      const controller = new AbortController();
      const aborted = fetch(`${lab.url}/lab/slow-write`, {
        method: 'POST',
        headers: { 'idempotency-key': key, authorization: `Bearer ${caller}`, 'content-type': 'application/json' },
        body: '{}',
        signal: controller.signal,
      }).catch((error: Error) => error);
      await handlerBackend();
      controller.abort();
      expect(await aborted).toHaveProperty('name', 'AbortError');
      const deadline = Date.now() + 5_000;
      while ((await sql(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction'`)).length > 0) {
        if (Date.now() > deadline) throw new Error('the handler transaction stayed open');
        await sleep(20);
      }
      expect(await paymentCount(caller)).toBe(0);
      expect(await keyRows(caller)).toEqual([]);
      const retry = await send(`${lab.url}/lab/slow-write`, { key, caller, body: {} });
      expect(retry.status).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
      expect(await paymentCount(caller)).toBe(1);
    });
  });

  describe('the database unreachable when reserving', () => {
    it('answers 503 store-unavailable and runs nothing', async () => {
      const dataSource = new DataSource({ type: 'postgres', url: databaseUrl() });
      await dataSource.initialize();
      const lab = await startLab({ dataSource });
      try {
        await dataSource.destroy();
        const caller = newCaller();
        const answer = await send(`${lab.url}/lab/scoped`, { key: newKey(), caller, body: {} });
        expect(answer.status).toBe(503);
        expect(answer.json).toMatchObject({ type: 'urn:nestjs-pg-idempotency:store-unavailable', status: 503 });
        expect(await paymentCount(caller)).toBe(0);
        expect(await keyRows(caller)).toEqual([]);
      } finally {
        await lab.close();
      }
    });
  });
});
