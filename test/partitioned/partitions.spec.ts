import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EntityManager } from 'typeorm';
import { DatabaseHost } from '../../src/hosts/database-host.js';
import { detachPartition } from '../../src/operations/sweeper/partitions.sql.js';
import { IdempotencySweeper, IdempotentMessages, type SweepResult } from '../../src/index.js';
import { scopeKey } from '../../src/key/scoped-key.js';
import { RECORD_FRESH_OUTCOME_PARTITIONED, RECORD_OUTCOME_PARTITIONED } from '../../src/store/table/record.sql.js';
import { LOCK_KEY } from '../../src/store/table/reservation.sql.js';
import { appsOn, HTTP_PLATFORMS, type RunningApp } from '../support/apps.js';
import { keyRows, paymentCount, sql } from '../support/database.js';
import { newCaller, newKey, send, validPayment } from '../support/http.js';
import {
  executions,
  LongTtlController,
  LongTtlMessagesController,
  PartitionsController,
} from './partitions.controller.js';

/** The partitions of idempotency_keys the module created, with their bounds, oldest first. */
async function ownPartitions(): Promise<Array<{ name: string; from: Date; to: Date }>> {
  return sql(
    `SELECT c.relname AS name,
            (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \\(''([^'']+)''\\)'))[1]::timestamptz AS "from",
            (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \\(''([^'']+)''\\)'))[1]::timestamptz AS "to"
     FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'idempotency_keys'::regclass AND c.relname ~ '^idempotency_keys_p\\d{8}t\\d{6}$'
     ORDER BY 2`,
  );
}

/**
 * Drops every partition the module created (by earlier suites and tests, with other intervals), so
 * that the apps a test starts create their own: the rows in them are other tests' and done with.
 */
async function dropOwnPartitions(): Promise<void> {
  for (const { name } of await ownPartitions()) await sql(`DROP TABLE ${name}`);
}

/** Own partitions wholly past `at` (PostgreSQL's now by default): every row in them expired. */
async function pastPartitions(at?: Date): Promise<string[]> {
  const [{ now }] = await sql<{ now: Date }>('SELECT now()');
  return (await ownPartitions()).filter(({ to }) => to <= (at ?? now)).map(({ name }) => name);
}

/** PostgreSQL's clock: a sweep that starts later drops at least the partitions wholly past at this moment. */
async function databaseNow(): Promise<Date> {
  const [{ now }] = await sql<{ now: Date }>('SELECT clock_timestamp() AS now');
  return now;
}

/**
 * Whether a row expiring `offset` from now has a partition: the insert runs, then a division by zero
 * computed from its result (never folded ahead of it) undoes it.
 */
async function holdsRowExpiringIn(offset: string): Promise<boolean> {
  try {
    await sql(
      `WITH probe AS (
         INSERT INTO idempotency_keys (key, caller, endpoint, fingerprint, expires_at)
         VALUES ('probe', 'probe', 'probe', '\\x00', now() + $1::interval) RETURNING 1
       ) SELECT 1 / (SELECT count(*) - 1 FROM probe)`,
      [offset],
    );
  } catch (error) {
    return (error as { code?: string }).code === '22012';
  }
  return false;
}

describe('the key table partitioned by expiry', () => {
  it('is what this run migrated (npm run test:partitioned)', async () => {
    const [{ kind }] = await sql(`SELECT relkind AS kind FROM pg_class WHERE oid = 'idempotency_keys'::regclass`);
    expect(kind).toBe('p');
  });

  describe('every entry reports its ttl: the partitions cover the longest of them all', () => {
    const { startLab } = appsOn('express');

    it('bootstrap creates partitions for the longest ttl of any @IdempotentMessage() handler (3 h here, routes 1 h)', async () => {
      await dropOwnPartitions();
      const routesOnly = await startLab({ ttl: '1h', partitionInterval: '20m' });
      await routesOnly.close();
      expect(await holdsRowExpiringIn('3 hours')).toBe(false);
      await dropOwnPartitions();
      const lab = await startLab({ ttl: '1h', partitionInterval: '20m' }, { controllers: [LongTtlMessagesController] });
      try {
        expect(await holdsRowExpiringIn('3 hours')).toBe(true);
      } finally {
        await lab.close();
      }
    });

    it("a message consumed with a ttl longer than any route's (5 h) runs once and is recorded, instead of being requeued forever", async () => {
      await dropOwnPartitions();
      const lab = await startLab({ ttl: '1h', partitionInterval: '20m' });
      try {
        const messages = lab.app.get(IdempotentMessages);
        const id = randomUUID();
        let runs = 0;
        const message = { transport: 'test', pattern: 'partitioned.longer', id, headers: {}, data: { id }, attempt: 1 };
        const first = await messages.consume(message, () => ++runs, { ttl: '5h' });
        expect(first.outcome).toEqual({ kind: 'executed', reply: 1 });
        const again = await messages.consume(message, () => ++runs, { ttl: '5h' });
        expect(again.outcome).toEqual({ kind: 'duplicate', reply: 1 });
        expect(runs).toBe(1);
        const rows = await sql<{ long: boolean }>(
          `SELECT expires_at - now() > interval '4 hours 59 minutes' AS long FROM idempotency_keys WHERE key = $1`,
          [id],
        );
        expect(rows).toEqual([{ long: true }]);
      } finally {
        await lab.close();
      }
    });
  });

  describe.each(HTTP_PLATFORMS)('on %s', (platform) => {
    const { startLab } = appsOn(platform);

    it('bootstrap creates partitions for the longest ttl of any route (3 h here), before the first request', async () => {
      await dropOwnPartitions();
      const lab = await startLab({ ttl: '1h', partitionInterval: '20m' }, { controllers: [LongTtlController] });
      try {
        expect(await holdsRowExpiringIn('3 hours')).toBe(true);
        expect(await holdsRowExpiringIn('1 second')).toBe(true);
        const caller = newCaller();
        const answer = await send(`${lab.url}/partitioned-long`, { key: newKey(), caller, body: {} });
        expect(answer.status).toBe(201);
        expect(await keyRows(caller)).toHaveLength(1);
      } finally {
        await lab.close();
        await dropOwnPartitions();
      }
    });

    describe('with partitions of 1 s and routes with a ttl of 1 s (the module ttl of 60 s makes partitions for the next 62 s)', () => {
      let a: RunningApp;
      let b: RunningApp;
      beforeAll(async () => {
        await dropOwnPartitions();
        a = await startLab({ ttl: '60s', partitionInterval: '1s' }, { controllers: [PartitionsController] });
        b = await startLab({ ttl: '60s', partitionInterval: '1s' }, { controllers: [PartitionsController] });
      });
      afterAll(async () => {
        await a?.close();
        await b?.close();
        // Every lookup reads each partition: the next suites' apps make their own, a few hours wide.
        await dropOwnPartitions();
      });

      it.each(['tx', 'lease'])(
        '%s: 20 concurrent retries of a key whose row expired in an older partition execute it once more, and the key keeps one row',
        async (route) => {
          const caller = newCaller();
          const key = newKey();
          expect((await send(`${a.url}/partitioned/${route}`, { key, caller, body: {} })).status).toBe(201);
          await sleep(1_300);
          const answers = await Promise.all(
            Array.from({ length: 20 }, (_, i) =>
              send(`${(i % 2 ? a : b).url}/partitioned/${route}`, { key, caller, body: {} }),
            ),
          );
          expect(answers.filter(({ status }) => status !== 201 && status !== 409)).toEqual([]);
          const executed = answers.filter(
            ({ status, headers }) => status === 201 && headers['idempotent-replayed'] === undefined,
          );
          expect(executed).toHaveLength(1);
          expect(executed[0].json).toEqual({ attempt: 2 });
          expect(executions.get(key)).toBe(2);
          expect(await keyRows(caller)).toEqual([expect.objectContaining({ key, state: 'completed', status: 201 })]);
        },
      );

      it('a lease still running in a partition wholly past keeps that partition until it ends; then the sweep drops it', async () => {
        const caller = newCaller();
        await sql(
          `INSERT INTO idempotency_keys (key, caller, endpoint, fingerprint, locked_until, lease_token, expires_at)
           VALUES ('held', $1, 'POST /partitioned/lease', '\\x00', now() + interval '1 hour', 7, now() + interval '500 milliseconds')`,
          [caller],
        );
        const [{ partition }] = await sql(
          `SELECT tableoid::regclass::text AS partition FROM idempotency_keys WHERE caller = $1`,
          [caller],
        );
        await sleep(1_600);
        const sweeper = a.app.get(IdempotencySweeper);
        // With 1 s partitions, another one may pass while a sweep runs: each check counts the
        // partitions wholly past when its sweep began.
        let began = await databaseNow();
        await sweeper.sweep();
        expect(await pastPartitions(began)).toEqual([partition]);
        expect(await keyRows(caller)).toHaveLength(1);
        await sql(`UPDATE idempotency_keys SET locked_until = now() WHERE caller = $1`, [caller]);
        began = await databaseNow();
        const swept = await sweeper.sweep();
        expect(swept).toEqual({ ran: true, deleted: 0, partitionsDropped: expect.any(Number), responsesDropped: 0 });
        expect(swept.partitionsDropped).toBeGreaterThanOrEqual(1);
        expect(await pastPartitions(began)).toEqual([]);
        expect(await keyRows(caller)).toHaveLength(0);
      });

      it.each([RECORD_OUTCOME_PARTITIONED, RECORD_FRESH_OUTCOME_PARTITIONED])(
        '$name: a row of the key in the way that is not takeable fails the recording, and the transaction commits nothing',
        async (record) => {
          const caller = newCaller();
          await sql(
            `INSERT INTO idempotency_keys (key, caller, endpoint, fingerprint, state, status, response_body, expires_at)
             VALUES ('standing', $1, 'POST /x', '\\x00', 'completed', 201, '\\x7b7d', now() + interval '20 seconds')`,
            [caller],
          );
          const host = a.app.get(DatabaseHost, { strict: false });
          const { transaction } = await host.begin(
            [[LOCK_KEY, [scopeKey('standing', caller, 'POST /x').lockId]]],
            [record],
          );
          // The handler's write, in the key's transaction.
          await (transaction.handle as EntityManager).query(
            `INSERT INTO idempotency_keys (key, caller, endpoint, fingerprint, state, expires_at) VALUES ('write', $1, 'POST /x', '\\x00', 'completed', now() + interval '20 seconds')`,
            [caller],
          );
          const params = ['standing', caller, 'POST /x', Buffer.alloc(32), 201, '[]', Buffer.from('{}'), 20_000, null];
          await expect(transaction.commitWith([[record, params]], false)).rejects.toThrow(/division by zero/);
          expect(await keyRows(caller)).toEqual([
            expect.objectContaining({ key: 'standing', state: 'completed', status: 201 }),
          ]);
        },
      );

      it('a key whose expiry has no partition yet (sweeps stopped, the partitions ahead ran out) is a 503 with Retry-After, nothing kept; the next sweep mends it', async () => {
        await dropOwnPartitions();
        const caller = newCaller();
        const key = newKey();
        const refused = await send(`${a.url}/partitioned/tx`, { key, caller, body: {} });
        expect({
          status: refused.status,
          type: refused.json?.type,
          retryAfter: refused.headers['retry-after'],
        }).toEqual({
          status: 503,
          type: 'urn:nestjs-pg-idempotency:store-unavailable',
          retryAfter: expect.any(String),
        });
        expect(await keyRows(caller)).toEqual([]);
        await a.app.get(IdempotencySweeper).sweep();
        const retried = await send(`${a.url}/partitioned/tx`, { key, caller, body: {} });
        expect(retried.status).toBe(201);
        expect(await keyRows(caller)).toHaveLength(1);
      });

      it('a past partition another instance detached after this one listed it: detaching it again does nothing, and the sweep drops it', async () => {
        await a.app.get(IdempotencySweeper).sweep();
        await sleep(1_200);
        const [past] = await pastPartitions();
        expect(past).toEqual(expect.any(String));
        const host = a.app.get(DatabaseHost, { strict: false });
        // Both instances planned from one listing: the first detaches, the second comes after it.
        await host.runAlone('detaching a partition', [detachPartition(past), []], { timeoutMs: 5_000 });
        await expect(
          host.runAlone('detaching a partition', [detachPartition(past), []], { timeoutMs: 5_000 }),
        ).resolves.toBeDefined();
        const [{ detached }] = await sql(`SELECT NOT relispartition AS detached FROM pg_class WHERE relname = $1`, [
          past,
        ]);
        expect(detached).toBe(true);
        const swept = await a.app.get(IdempotencySweeper).sweep();
        expect(swept.partitionsDropped).toBeGreaterThanOrEqual(1);
        expect(await sql(`SELECT 1 FROM pg_class WHERE relname = $1`, [past])).toEqual([]);
      });

      it('two instances sweeping at once: each past partition is dropped once, by one of them, and nothing fails', async () => {
        await a.app.get(IdempotencySweeper).sweep();
        await sleep(2_200);
        const began = await databaseNow();
        const before = (await ownPartitions()).map(({ name }) => name);
        expect((await pastPartitions(began)).length).toBeGreaterThanOrEqual(2);
        const results = await Promise.all([a, b].map((app) => app.app.get(IdempotencySweeper).sweep()));
        const dropped = results.reduce((sum: number, result: SweepResult) => sum + (result.partitionsDropped ?? 0), 0);
        const after = new Set((await ownPartitions()).map(({ name }) => name));
        // Each partition gone was dropped by exactly one of them; every one past when they began is gone.
        expect(dropped).toBe(before.filter((name) => !after.has(name)).length);
        expect(await pastPartitions(began)).toEqual([]);
      });

      it('partitions are dropped under live traffic (keys of 1 s): every request answered, every key executed once, every retry replayed', async () => {
        const caller = newCaller();
        const stopAt = Date.now() + 6_000;
        const unexpected: string[] = [];
        let paymentKeys = 0;
        const shortKeys: string[] = [];
        const client = async (
          app: RunningApp,
          route: 'payments' | 'partitioned/tx' | 'partitioned/lease',
        ): Promise<void> => {
          while (Date.now() < stopAt) {
            const key = newKey();
            const url = `${app.url}/${route}`;
            const body = route === 'payments' ? validPayment : {};
            const first = await send(url, { key, caller, body });
            const retry = await send(url, { key, caller, body });
            if (route === 'payments') paymentKeys++;
            else shortKeys.push(key);
            if (first.status !== 201) unexpected.push(`${route} ${first.status} ${first.text}`);
            if (retry.status !== 201 || retry.headers['idempotent-replayed'] !== 'true')
              unexpected.push(`${route} retry ${retry.status}`);
          }
        };
        let partitionsDropped = 0;
        const sweeping = (async () => {
          while (Date.now() < stopAt) {
            partitionsDropped += (await a.app.get(IdempotencySweeper).sweep()).partitionsDropped ?? 0;
            await sleep(250);
          }
        })();
        await Promise.all([
          client(a, 'partitioned/tx'),
          client(b, 'partitioned/tx'),
          client(a, 'partitioned/lease'),
          client(b, 'payments'),
          sweeping,
        ]);
        expect(unexpected).toEqual([]);
        expect(partitionsDropped).toBeGreaterThanOrEqual(3);
        expect(shortKeys.length).toBeGreaterThan(30);
        expect(shortKeys.map((key) => executions.get(key))).toEqual(shortKeys.map(() => 1));
        expect(paymentKeys).toBeGreaterThan(5);
        expect(await paymentCount(caller)).toBe(paymentKeys);
      });
    });
  });
});
