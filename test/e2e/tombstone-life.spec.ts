import { randomUUID } from 'node:crypto';
import pg from 'pg';
import {
  IdempotencyKeyConsole,
  IdempotencyService,
  IdempotencySweeper,
  IdempotencyTransaction,
} from '../../src/index.js';
import { CREATE_IDEMPOTENCY_KEYS } from '../../src/store/migrations/idempotency-keys.schema.js';
import { appsOn, bootstrapFailure, type RunningApp } from '../support/apps.js';
import { cli } from '../support/cli.js';
import { emptyDatabase, paymentCount, sql, untilKeyPast } from '../support/database.js';
import { newCaller, newKey, send, validPayment } from '../support/http.js';
import { payloadFingerprint } from '../../src/key/payload-fingerprint.js';
import { ProviderEventsController } from './tombstone-life.controller.js';

describe("a key's whole life with a tombstone (IdempotencyService.run())", () => {
  const { startLab } = appsOn('express');
  let lab: RunningApp;
  let service: IdempotencyService;
  beforeAll(async () => {
    lab = await startLab({}, { controllers: [ProviderEventsController] });
    service = lab.app.get(IdempotencyService);
  });
  afterAll(() => lab.close());

  it.each(['transactional', 'lease'] as const)(
    '%s mode: replayed (from this instance too) until its ttl, a tombstone after it, and past the tombstone a new request that runs',
    async (mode) => {
      const [caller, key] = [newCaller(), randomUUID()];
      let runs = 0;
      const call = () =>
        service.run({ scope: 'settlement', key, caller, ttl: '1s', tombstone: '3s', mode }, async () => {
          runs++;
          if (mode === 'transactional')
            await lab.app
              .get(IdempotencyTransaction)
              .manager.query(`INSERT INTO payments (caller, amount, currency) VALUES ($1, 7, 'EUR')`, [caller]);
          return { run: runs };
        });
      expect(await call()).toEqual({ kind: 'executed', value: { run: 1 } });
      // The outcome this instance remembers is replayed without a round trip, but no longer than the response lives.
      expect(await call()).toEqual({ kind: 'replayed', value: { run: 1 } });
      await untilKeyPast(key, 'response_expires_at');
      const tombstone = await call();
      expect(tombstone).toEqual({
        kind: 'tombstone',
        tombstone: {
          completedAt: expect.any(Date),
          responseExpiredAt: expect.any(Date),
          expiresAt: expect.any(Date),
          status: 0,
        },
        failed: false,
      });
      if (tombstone.kind !== 'tombstone') return;
      expect(tombstone.tombstone.responseExpiredAt.getTime() - tombstone.tombstone.completedAt.getTime()).toBe(1000);
      expect(tombstone.tombstone.expiresAt.getTime() - tombstone.tombstone.completedAt.getTime()).toBe(3000);
      expect(runs).toBe(1);
      // The key console shows it as support sees it: a tombstone, not expired.
      const [report] = await lab.app.get(IdempotencyKeyConsole).lookup({ key, caller, endpoint: 'CALL settlement' });
      expect(report).toMatchObject({
        state: 'completed',
        status: 0,
        expired: false,
        tombstone: true,
        responseExpiresAt: tombstone.tombstone.responseExpiredAt.toISOString(),
        expiresAt: tombstone.tombstone.expiresAt.toISOString(),
      });
      await untilKeyPast(key, 'expires_at');
      expect(await call()).toEqual({ kind: 'executed', value: { run: 2 } });
      if (mode === 'transactional') expect(await paymentCount(caller)).toBe(2);
    },
  );

  it('a recorded failure keeps its tombstone as one: failed, as failed-before says within the ttl', async () => {
    const key = randomUUID();
    const call = () =>
      service.run({ scope: 'settlement', key, ttl: '1s', tombstone: '1h', recordFailure: true }, () => {
        throw new Error('declined');
      });
    expect(await call()).toMatchObject({ kind: 'failure-recorded' });
    await untilKeyPast(key, 'response_expires_at');
    expect(await call()).toMatchObject({ kind: 'tombstone', failed: true, tombstone: { status: 1 } });
  });

  it("a provider's route: a handled event's retry past the ttl is answered 200, a refused one's 410; both carry the key's expiry, and neither runs", async () => {
    const provider = lab.app.get(ProviderEventsController);
    const deliver = (id: string, refuse = false) =>
      send(`${lab.url}/provider/events`, { caller: null, body: { id, refuse } });
    const [handled, refused] = [`evt_${randomUUID()}`, `evt_${randomUUID()}`];
    const first = [await deliver(handled), await deliver(refused, true)];
    expect(first.map((answer) => answer.status)).toEqual([200, 422]);
    const replayed = await deliver(handled);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.headers['idempotency-key-expires']).toBe(first[0].headers['idempotency-key-expires']);
    await untilKeyPast(handled, 'response_expires_at');
    await untilKeyPast(refused, 'response_expires_at');
    const late = [await deliver(handled), await deliver(refused, true)];
    expect(late.map((answer) => answer.status)).toEqual([200, 410]);
    expect(late[0].json).toMatchObject({ type: 'urn:nestjs-pg-idempotency:key-expired', recordedStatus: 200 });
    expect(late[1].json).toMatchObject({ type: 'urn:nestjs-pg-idempotency:key-expired', recordedStatus: 422 });
    for (const [answer, original] of late.map((answer, at) => [answer, first[at]] as const))
      expect(
        Math.abs(
          Date.parse(answer.headers['idempotency-key-expires'] as string) -
            Date.parse(original.headers['idempotency-key-expires'] as string),
        ),
      ).toBeLessThanOrEqual(1000);
    expect(provider.handled).toBe(2);
  });

  it('a row an older build took over (its completed_at left older than its created_at) is no tombstone: replayed, and its answer kept by the sweep', async () => {
    const [caller, key] = [newCaller(), randomUUID()];
    const call = () => service.run({ scope: 'settlement', key, caller, ttl: '1s', tombstone: '1h' }, () => 'first');
    await call();
    await untilKeyPast(key, 'response_expires_at');
    // What a build without tombstones leaves when it takes the row over: a new outcome, the old columns.
    await sql(
      `UPDATE idempotency_keys SET created_at = now(), response_body = convert_to('"older build"', 'UTF8'), fingerprint = $2,
              expires_at = now() + interval '1 hour' WHERE key = $1`,
      [key, payloadFingerprint(undefined)],
    );
    expect(await call()).toEqual({ kind: 'replayed', value: 'older build' });
    await lab.app.get(IdempotencySweeper).sweep();
    const [row] = await sql('SELECT convert_from(response_body, $2) AS body FROM idempotency_keys WHERE key = $1', [
      key,
      'UTF8',
    ]);
    expect(row.body).toBe('"older build"');
  });

  it('a tombstone no longer than the ttl is refused, naming the option; nothing runs', async () => {
    let runs = 0;
    await expect(
      service.run({ scope: 'settlement', key: randomUUID(), ttl: '1h', tombstone: '1h' }, () => ++runs),
    ).rejects.toThrow(/option "tombstone" must be longer than ttl/);
    expect(runs).toBe(0);
  });

  it('without a tombstone, a row past its ttl is a new request, and the sweep deletes it (nothing kept)', async () => {
    const [caller, key] = [newCaller(), randomUUID()];
    let runs = 0;
    const call = () => service.run({ scope: 'settlement', key, caller, ttl: '1s' }, () => ++runs);
    await call();
    await untilKeyPast(key, 'expires_at');
    const [row] = await sql('SELECT response_expires_at, completed_at FROM idempotency_keys WHERE key = $1', [key]);
    expect(row).toEqual({ response_expires_at: null, completed_at: null });
    expect(await call()).toEqual({ kind: 'executed', value: 2 });
    await untilKeyPast(key, 'expires_at');
    await lab.app.get(IdempotencySweeper).sweep();
    expect(await sql('SELECT 1 FROM idempotency_keys WHERE key = $1', [key])).toEqual([]);
  });
});

describe('a key table created before tombstones', () => {
  const { startLab } = appsOn('express');

  it('the app refuses to start, naming AddIdempotencyTombstones1796860800000 and its SQL file; `migrate` adds the columns, keeping the rows', async () => {
    const database = await emptyDatabase('before_tombstones');
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      for (const statement of CREATE_IDEMPOTENCY_KEYS) await client.query(statement);
      await client.query(`DROP INDEX idempotency_keys_response_expires_at_idx`);
      await client.query(`ALTER TABLE idempotency_keys DROP COLUMN response_expires_at, DROP COLUMN completed_at`);
      await client.query(
        `CREATE TABLE payments (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), caller text NOT NULL, amount integer NOT NULL,
         currency char(3) NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`,
      );
      await client.query(
        `INSERT INTO idempotency_keys (key, caller, endpoint, fingerprint, state, status, expires_at) VALUES ('old', 'c', 'POST /x', '\\x00', 'completed', 201, now() + interval '1 hour')`,
      );
      const refused = (await bootstrapFailure(startLab({}, { databaseUrl: database.url }))) as Error;
      expect(refused.name).toBe('TablesNotMigratedError');
      expect(refused.message).toContain('idempotency_keys lacks response_expires_at, completed_at');
      expect(refused.message).toContain('AddIdempotencyTombstones1796860800000');
      expect(refused.message).toContain('migrations/1796860800000-add-idempotency-tombstones.sql');
      expect(refused.message).not.toContain('CreateIdempotencyKeys1795996800000');

      expect(await cli(['migrate'], { DATABASE_URL: database.url })).toMatchObject({
        code: 0,
        stdout:
          'present: idempotency_keys\napplied: idempotency_keys tombstone columns (1796860800000-add-idempotency-tombstones.sql)\n',
      });
      expect(await cli(['migrate'], { DATABASE_URL: database.url })).toMatchObject({
        code: 0,
        stdout: 'present: idempotency_keys\n',
      });
      const { rows } = await client.query(`SELECT key, status FROM idempotency_keys`);
      expect(rows).toEqual([{ key: 'old', status: 201 }]);
      const lab = await startLab({}, { databaseUrl: database.url });
      try {
        expect(
          (await send(`${lab.url}/payments`, { key: newKey(), caller: newCaller(), body: validPayment })).status,
        ).toBe(201);
      } finally {
        await lab.close();
      }
    } finally {
      await client.end();
      await database.drop();
    }
  });
});
