import { Logger } from '@nestjs/common';
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import pg from 'pg';
import {
  CREATE_IDEMPOTENCY_KEYS,
  CREATE_PARTITIONED_IDEMPOTENCY_KEYS,
  DIGEST_IDEMPOTENCY_KEYS,
  IdempotencyResealer,
  IdempotencySweeper,
  IdempotentMessages,
  type StorageOptions,
} from '../../src/index.js';
import { DEMO_TABLES } from '../../src/demo/demo-tables.js';
import { appsOn, databaseUrl, HTTP_PLATFORMS, type RunningApp, startLab } from '../support/apps.js';
import { paymentCount, sql } from '../support/database.js';
import { type Answer, newCaller, newKey, send, validPayment } from '../support/http.js';
import { CARD_NUMBER, CARD_TOKEN, ProtectedStorageController } from './protected-storage.controller.js';

const newAesKey = () => randomBytes(32).toString('base64');

/** The `key` column of a digested row, computed here from the documented formula, not the module's code. */
function digestedKey(key: string, caller: string): string {
  const callerBytes = Buffer.from(caller, 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32BE(callerBytes.length);
  return 'sha256:' + createHash('sha256').update(length).update(callerBytes).update(key, 'utf8').digest('hex');
}

/** The `endpoint` column of a digested row. */
const digestedEndpoint = (endpoint: string) => 'sha256:' + createHash('sha256').update(endpoint, 'utf8').digest('hex');

/**
 * The rows named by `keys` as a dump prints them (bytea in hex), without their two timestamps
 * (the module's own metadata, which a body holding the time of day would share).
 */
async function dumpedRows(keys: string[]): Promise<string> {
  const rows = await sql<{ row: string }>('SELECT k::text AS row FROM idempotency_keys AS k WHERE key = ANY($1)', [
    keys,
  ]);
  expect(rows).toHaveLength(keys.length);
  return rows.map(({ row }) => row.replace(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?\+00/g, '')).join('\n');
}

/** Every run of 8 bytes of `body`, in clear and as hex: none may appear in a dump of a sealed row. */
function bodyWindows(body: Buffer): string[] {
  const windows: string[] = [];
  for (let at = 0; at + 8 <= body.length; at++) {
    const window = body.subarray(at, at + 8);
    windows.push(window.toString('utf8'), window.toString('hex'));
  }
  return windows;
}

/** What a replay must repeat of the first answer: status, body bytes, and every header the module stores. */
function expectSameAnswer(replay: Answer, first: Answer): void {
  expect(replay.status).toBe(first.status);
  expect(replay.body.equals(first.body)).toBe(true);
  expect(replay.headers['content-type']).toBe(first.headers['content-type']);
  expect(replay.headers['location']).toBe(first.headers['location']);
  expect(replay.headers['idempotent-replayed']).toBe('true');
}

describe.each(HTTP_PLATFORMS)('on %s', (platform) => {
  const { startDemo, startLab } = appsOn(platform);
  const demoWith = (storage: StorageOptions) => startDemo({ storage });

  describe('a dump of the key table after paying through the demo (keys digested, outcomes sealed)', () => {
    it('shows neither the key, nor the caller, nor any 8 bytes of the body; the replay stays byte-exact', async () => {
      const storage: StorageOptions = { keys: 'digest', encryption: { keys: [{ id: 'k1', key: newAesKey() }] } };
      const demo = await demoWith(storage);
      try {
        const caller = newCaller();
        const key = newKey();
        const first = await send(`${demo.url}/payments`, { key, caller, body: validPayment });
        expect(first.status).toBe(201);
        const dump = await dumpedRows([digestedKey(key, caller)]);
        expect(dump).not.toContain(key);
        expect(dump).not.toContain(caller);
        expect(dump).not.toContain(first.json.id);
        for (const window of bodyWindows(first.body)) expect(dump).not.toContain(window);
        const [row] = await sql('SELECT caller, endpoint, response_headers FROM idempotency_keys WHERE key = $1', [
          digestedKey(key, caller),
        ]);
        expect(row).toEqual({
          caller: '',
          endpoint: digestedEndpoint('POST /payments'),
          response_headers: { sealedWith: 'k1' },
        });
        // Another instance, with no replay cache of its own: the replay is opened from the row.
        const other = await demoWith(storage);
        try {
          expectSameAnswer(await send(`${other.url}/payments`, { key, caller, body: validPayment }), first);
          expect(await paymentCount(caller)).toBe(1);
        } finally {
          await other.close();
        }
      } finally {
        await demo.close();
      }
    });

    it('pg_dump of the table shows neither the key, nor the caller, nor the payment it answered with, nor the path that names it', async () => {
      const demo = await demoWith({ keys: 'digest', encryption: { keys: [{ id: 'k1', key: newAesKey() }] } });
      try {
        const caller = newCaller();
        const key = newKey();
        const first = await send(`${demo.url}/payments`, { key, caller, body: validPayment });
        const refund = await send(`${demo.url}/payments/${first.json.id}/refunds`, {
          key: newKey(),
          caller,
          body: { amount: 100 },
        });
        expect(refund.status).toBe(201);
        const dump = await pgDump();
        expect(dump).toContain(digestedKey(key, caller));
        expect(dump).not.toContain(key);
        expect(dump).not.toContain(caller);
        expect(dump).not.toContain(first.json.id);
        expect(dump).not.toContain(refund.json.id);
      } finally {
        await demo.close();
      }
    });
  });

  describe('keys stored as digests', () => {
    it('duplicates at once run once; a replay, a conflict and another payload behave as with keys in clear', async () => {
      const demo = await demoWith({ keys: 'digest' });
      try {
        const caller = newCaller();
        const key = newKey();
        const answers = await Promise.all(
          Array.from({ length: 20 }, () => send(`${demo.url}/payments`, { key, caller, body: validPayment })),
        );
        expect(answers.filter((answer) => answer.status === 201)).toHaveLength(
          20 - answers.filter((answer) => answer.status === 409).length,
        );
        expect(await paymentCount(caller)).toBe(1);
        const created = answers.find(
          (answer) => answer.status === 201 && answer.headers['idempotent-replayed'] === undefined,
        )!;
        expectSameAnswer(await send(`${demo.url}/payments`, { key, caller, body: validPayment }), created);
        const other = await send(`${demo.url}/payments`, {
          key,
          caller,
          body: { ...validPayment, amount: validPayment.amount + 1 },
        });
        expect(other.status).toBe(422);
        // The same key from another caller is another scope: it runs, in a row of its own.
        const stranger = newCaller();
        expect(
          (await send(`${demo.url}/payments`, { key, caller: stranger, body: validPayment })).headers[
            'idempotent-replayed'
          ],
        ).toBeUndefined();
        const rows = await sql('SELECT key, caller FROM idempotency_keys WHERE key = ANY($1) ORDER BY key', [
          [digestedKey(key, caller), digestedKey(key, stranger)],
        ]);
        expect(rows).toHaveLength(2);
        expect(rows.every((row) => row.caller === '')).toBe(true);
        expect(await sql('SELECT 1 FROM idempotency_keys WHERE key = $1', [key])).toHaveLength(0);
      } finally {
        await demo.close();
      }
    });

    it('the sweeper deletes expired digested rows', async () => {
      const demo = await startDemo({ storage: { keys: 'digest' }, ttlSeconds: 1 });
      try {
        const caller = newCaller();
        const key = newKey();
        await send(`${demo.url}/payments`, { key, caller, body: validPayment });
        const stored = digestedKey(key, caller);
        await sql("UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = $1", [stored]);
        await demo.app.get(IdempotencySweeper).sweep();
        expect(await sql('SELECT 1 FROM idempotency_keys WHERE key = $1', [stored])).toHaveLength(0);
      } finally {
        await demo.close();
      }
    });
  });

  describe('the digesting migration, on a table with live rows', () => {
    it('a retry after the migration, on instances started with keys digested, is replayed, never run again', async () => {
      const database = await freshDatabase();
      const aesKey = newAesKey();
      // Sealed rows stay readable across the migration: what seals them is bound to the key's digest.
      const sealed = { encryption: { keys: [{ id: 'k1', key: aesKey }] } };
      const caller = newCaller();
      const keys = Array.from({ length: 10 }, () => newKey());
      const firsts: Answer[] = [];
      try {
        const before = await startDemo({
          databaseUrl: database.url,
          storage: { keys: 'clear', ...(platform === 'fastify' ? sealed : {}) },
        });
        try {
          for (const key of keys)
            firsts.push(await send(`${before.url}/payments`, { key, caller, body: validPayment }));
        } finally {
          await before.close();
        }
        expect(
          await database.query('SELECT count(*)::int AS n FROM idempotency_keys WHERE caller = $1', [caller]),
        ).toEqual([{ n: 10 }]);
        for (const statement of DIGEST_IDEMPOTENCY_KEYS) await database.query(statement);
        // Safe to run again: digested rows are left as they are.
        for (const statement of DIGEST_IDEMPOTENCY_KEYS) await database.query(statement);
        const rows = await database.query('SELECT key, caller, endpoint FROM idempotency_keys ORDER BY key');
        expect(rows.map((row) => row.key).sort()).toEqual(keys.map((key) => digestedKey(key, caller)).sort());
        expect(rows.every((row) => row.caller === '' && row.endpoint === digestedEndpoint('POST /payments'))).toBe(
          true,
        );
        const after = await startDemo({
          databaseUrl: database.url,
          storage: { keys: 'digest', ...(platform === 'fastify' ? sealed : {}) },
        });
        try {
          for (const [index, key] of keys.entries())
            expectSameAnswer(await send(`${after.url}/payments`, { key, caller, body: validPayment }), firsts[index]!);
          expect(await database.query('SELECT count(*)::int AS n FROM payments WHERE caller = $1', [caller])).toEqual([
            { n: 10 },
          ]);
        } finally {
          await after.close();
        }
      } finally {
        await database.drop();
      }
    });
  });

  describe('outcomes sealed with AES-256-GCM', () => {
    it('rotation under live traffic: rows are resealed with the new key while payments and replays go on; the old key can then go', async () => {
      // A database of its own: the resealer reads the whole table, and other suites' rows are sealed with keys of theirs.
      const database = await freshDatabase();
      const demoWith = (storage: StorageOptions) => startDemo({ storage, databaseUrl: database.url });
      const paymentCount = async (caller: string) =>
        (await database.query('SELECT count(*)::int AS n FROM payments WHERE caller = $1', [caller]))[0].n;
      const sql = database.query;
      const k1 = { id: 'k1', key: newAesKey() };
      const k2 = { id: 'k2', key: newAesKey() };
      const caller = newCaller();
      const old = Array.from({ length: 20 }, () => newKey());
      const firsts = new Map<string, Answer>();
      try {
        const before = await demoWith({ encryption: { keys: [k1] } });
        try {
          for (const key of old)
            firsts.set(key, await send(`${before.url}/payments`, { key, caller, body: validPayment }));
        } finally {
          await before.close();
        }
        const rotated = await demoWith({ encryption: { keys: [k2, k1] } });
        const fresh = Array.from({ length: 30 }, () => newKey());
        try {
          const [report] = await Promise.all([
            rotated.app.get(IdempotencyResealer).reseal({ batchSize: 4 }),
            ...fresh.map(async (key) =>
              firsts.set(key, await send(`${rotated.url}/payments`, { key, caller, body: validPayment })),
            ),
            ...old.map(async (key) =>
              expectSameAnswer(
                await send(`${rotated.url}/payments`, { key, caller, body: validPayment }),
                firsts.get(key)!,
              ),
            ),
          ]);
          expect(report.unreadable).toBe(0);
          expect(report.resealed).toBeGreaterThanOrEqual(1);
          // Whatever the first run met mid-write is sealed by the next; then nothing is left.
          await rotated.app.get(IdempotencyResealer).reseal();
          expect(await rotated.app.get(IdempotencyResealer).reseal()).toEqual({
            resealed: 0,
            unreadable: 0,
            skipped: 0,
          });
        } finally {
          await rotated.close();
        }
        const sealedWith = await sql(
          "SELECT response_headers->>'sealedWith' AS id, count(*)::int AS n FROM idempotency_keys WHERE caller = $1 GROUP BY 1",
          [caller],
        );
        expect(sealedWith).toEqual([{ id: 'k2', n: 50 }]);
        const retired = await demoWith({ encryption: { keys: [k2] } });
        try {
          for (const [key, first] of firsts)
            expectSameAnswer(await send(`${retired.url}/payments`, { key, caller, body: validPayment }), first);
          expect(await paymentCount(caller)).toBe(50);
        } finally {
          await retired.close();
        }
      } finally {
        await database.drop();
      }
    });

    it('the resealer seals rows written in clear before encryption was turned on', async () => {
      const database = await freshDatabase();
      const demoWith = (storage: StorageOptions) => startDemo({ storage, databaseUrl: database.url });
      const sql = database.query;
      try {
        const caller = newCaller();
        const key = newKey();
        const clear = await demoWith({});
        const first = await send(`${clear.url}/payments`, { key, caller, body: validPayment }).finally(() =>
          clear.close(),
        );
        const k1 = { id: 'k1', key: newAesKey() };
        const sealing = await demoWith({ encryption: { keys: [k1] } });
        try {
          // Read as it is until it is resealed.
          expectSameAnswer(await send(`${sealing.url}/payments`, { key, caller, body: validPayment }), first);
          expect((await sealing.app.get(IdempotencyResealer).reseal()).resealed).toBeGreaterThanOrEqual(1);
        } finally {
          await sealing.close();
        }
        const [row] = await sql('SELECT response_headers, response_body FROM idempotency_keys WHERE caller = $1', [
          caller,
        ]);
        expect(row.response_headers).toEqual({ sealedWith: 'k1' });
        expect(row.response_body.includes(first.body)).toBe(false);
        const reader = await demoWith({ encryption: { keys: [k1] } });
        try {
          expectSameAnswer(await send(`${reader.url}/payments`, { key, caller, body: validPayment }), first);
        } finally {
          await reader.close();
        }
      } finally {
        await database.drop();
      }
    });

    it.each([
      ['a tampered row (one bit of its body flipped)', 'tamper'],
      ['a row sealed with a key id the app does not list', 'unknown key'],
    ] as const)(
      '%s is a 503 with Retry-After and an error log: never replayed, never run again',
      async (_what, fault) => {
        const k1 = { id: 'k1', key: newAesKey() };
        const caller = newCaller();
        const key = newKey();
        const writer = await demoWith({ encryption: { keys: [k1] } });
        await send(`${writer.url}/payments`, { key, caller, body: validPayment }).finally(() => writer.close());
        if (fault === 'tamper') {
          await sql(
            'UPDATE idempotency_keys SET response_body = set_byte(response_body, 40, get_byte(response_body, 40) # 1) WHERE caller = $1',
            [caller],
          );
        }
        const [before] = await sql(
          'SELECT response_headers, response_body, expires_at FROM idempotency_keys WHERE caller = $1',
          [caller],
        );
        const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
        const reader = await demoWith({
          encryption: { keys: fault === 'tamper' ? [k1] : [{ id: 'k9', key: newAesKey() }] },
        });
        try {
          for (let attempt = 0; attempt < 2; attempt++) {
            const retry = await send(`${reader.url}/payments`, { key, caller, body: validPayment });
            expect(retry.status).toBe(503);
            expect(retry.headers['content-type']).toContain('application/problem+json');
            expect(retry.headers['retry-after']).toBe('1');
            expect(retry.json.type).toBe('urn:nestjs-pg-idempotency:outcome-unreadable');
            expect(retry.headers['idempotent-replayed']).toBeUndefined();
          }
          const logged = errors.mock.calls.map(([message]) => String(message));
          expect(
            logged.some((message) =>
              message.includes(
                fault === 'tamper'
                  ? 'authentication tag does not match'
                  : '"k1", which storage.encryption.keys does not list',
              ),
            ),
          ).toBe(true);
          expect(logged.join('\n')).not.toContain(key);
          expect(await paymentCount(caller)).toBe(1);
          // The resealer leaves it as it is: sealed with the current key, it is not read; sealed with
          // an unlisted one, it cannot be opened, and is counted.
          const resealed = await reader.app.get(IdempotencyResealer).reseal();
          if (fault === 'unknown key') expect(resealed.unreadable).toBeGreaterThanOrEqual(1);
          expect(
            await sql('SELECT response_headers, response_body, expires_at FROM idempotency_keys WHERE caller = $1', [
              caller,
            ]),
          ).toEqual([before]);
        } finally {
          errors.mockRestore();
          await reader.close();
        }
      },
    );

    it('a sealed replay of a lease-mode route (the refund) is byte-exact, and its row sealed', async () => {
      const demo = await demoWith({ encryption: { keys: [{ id: 'k1', key: newAesKey() }] } });
      try {
        const caller = newCaller();
        const payment = await send(`${demo.url}/payments`, { key: newKey(), caller, body: validPayment });
        const key = newKey();
        const url = `${demo.url}/payments/${payment.json.id}/refunds`;
        const first = await send(url, { key, caller, body: { amount: 100 } });
        expect(first.status).toBe(201);
        const rows = await sql(
          "SELECT response_headers FROM idempotency_keys WHERE caller = $1 AND endpoint LIKE '%refunds'",
          [caller],
        );
        expect(rows).toEqual([{ response_headers: { sealedWith: 'k1' } }]);
        expectSameAnswer(await send(url, { key, caller, body: { amount: 100 } }), first);
      } finally {
        await demo.close();
      }
    });
  });

  describe('redaction', () => {
    let lab: RunningApp;
    beforeAll(async () => {
      lab = await startLab(
        { replayHeaders: ['x-card-token', 'x-card-brand'] },
        { controllers: [ProtectedStorageController] },
      );
    });
    afterAll(() => lab.close());

    it('the first client gets the named header and fields; the row and every replay are without them', async () => {
      const caller = newCaller();
      const key = newKey();
      const first = await send(`${lab.url}/protected/card`, { key, caller, body: {} });
      expect(first.status).toBe(201);
      expect(first.headers['x-card-token']).toBe(CARD_TOKEN);
      expect(first.json.card).toEqual({ number: CARD_NUMBER, last4: '4242' });
      // Express tags a body it sends; Fastify does not.
      expect(first.headers.etag).toEqual(platform === 'express' ? expect.stringMatching(/^W\/"/) : undefined);
      const [row] = await sql('SELECT response_headers, response_body FROM idempotency_keys WHERE caller = $1', [
        caller,
      ]);
      expect(JSON.stringify(row.response_headers)).not.toContain(CARD_TOKEN);
      expect(row.response_headers).toContainEqual(['x-card-brand', 'visa']);
      expect(row.response_body.toString()).not.toContain(CARD_NUMBER);
      expect(row.response_body.toString()).not.toContain('s1');
      const replay = await send(`${lab.url}/protected/card`, { key, caller, body: {} });
      expect(replay.status).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.headers['x-card-token']).toBeUndefined();
      expect(replay.headers['x-card-brand']).toBe('visa');
      expect(replay.json).toEqual({ id: first.json.id, card: { last4: '4242' }, items: [{ n: 1 }, { n: 2 }] });
      // The first answer's entity tag names its unredacted bytes: the replay's are others.
      expect(replay.headers.etag).toBeUndefined();
      expect(await paymentCount(caller)).toBe(1);
    });
  });
});

describe('a message consumer on protected storage', () => {
  it('stores its key and pattern as digests and its reply sealed; a duplicate on another instance is answered with the reply, not run', async () => {
    const storage: StorageOptions = { keys: 'digest', encryption: { keys: [{ id: 'k1', key: newAesKey() }] } };
    const message = {
      transport: 'test',
      pattern: 'payment.created',
      id: newKey(),
      headers: {},
      data: { amount: 1 },
      attempt: 1,
    };
    let runs = 0;
    const handler = () => ++runs && { receipt: 'r-7f3a9c1e55' };
    const first = await startLab({ storage });
    const consumed = await first.app
      .get(IdempotentMessages)
      .consume(message, handler)
      .finally(() => first.close());
    expect(consumed).toMatchObject({ outcome: { kind: 'executed' }, settlement: 'ack' });
    const dump = await dumpedRows([digestedKey(message.id, '')]);
    expect(dump).toContain(digestedEndpoint('MESSAGE payment.created'));
    expect(dump).not.toContain(message.id);
    expect(dump).not.toContain('payment.created');
    expect(dump).not.toContain('r-7f3a9c1e55');
    const second = await startLab({ storage });
    try {
      const duplicate = await second.app.get(IdempotentMessages).consume(message, handler);
      expect(duplicate).toMatchObject({
        outcome: { kind: 'duplicate', reply: { receipt: 'r-7f3a9c1e55' } },
        settlement: 'ack',
      });
      expect(runs).toBe(1);
    } finally {
      await second.close();
    }
  });
});

/**
 * `pg_dump` of idempotency_keys' data (with its partitions, on the partitioned table); where this
 * pg_dump is older than the server, the same rows as COPY prints them.
 */
async function pgDump(): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)(
      'pg_dump',
      ['--data-only', '--table=idempotency_keys*', databaseUrl()],
      { maxBuffer: 256 * 1024 * 1024 },
    );
    return stdout;
  } catch (error) {
    if (!/server version mismatch|ENOENT/.test(String((error as Error).message))) throw error;
    const rows = await sql<{ row: string }>('SELECT k::text AS row FROM idempotency_keys AS k');
    return rows.map(({ row }) => row).join('\n');
  }
}

/** A database of its own on the suites' server, with the key table and the demo's tables, dropped after. */
async function freshDatabase(): Promise<{
  url: string;
  query: (text: string, params?: unknown[]) => Promise<any[]>;
  drop: () => Promise<void>;
}> {
  const name = `idempotency_digest_${process.pid}_${randomBytes(3).toString('hex')}`;
  await sql(`CREATE DATABASE ${name}`);
  const url = new URL(databaseUrl());
  url.pathname = `/${name}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  // The run's kind of key table (npm run test:partitioned: partitioned by expiry; the app makes its partitions).
  const keyTable =
    process.env.IDEMPOTENCY_KEY_TABLE === 'partitioned' ? CREATE_PARTITIONED_IDEMPOTENCY_KEYS : CREATE_IDEMPOTENCY_KEYS;
  for (const statement of keyTable) await client.query(statement);
  const { DataSource } = await import('typeorm');
  const tables = new DataSource({ type: 'postgres', url: url.toString(), migrations: [...DEMO_TABLES] });
  await tables.initialize();
  await tables.runMigrations();
  await tables.destroy();
  return {
    url: url.toString(),
    query: async (text, params = []) => (await client.query(text, params)).rows,
    drop: async () => {
      await client.end();
      await sql(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}
