import { Body, Controller, Post, UseGuards } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { Idempotent } from '../../src/index.js';
import { BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
import { RENEW_LEASE } from '../../src/store/table/record.sql.js';
import { keyRows, sql, until, untilPast, waitingOnTable } from '../support/database.js';
import { appsOn, databaseUrl, HTTP_PLATFORMS, type RunningApp } from '../support/apps.js';
import { type Answer, newCaller, newKey, send, validPayment } from '../support/http.js';
import { entered, release } from '../support/latch.js';
import { sentQueries } from '../support/sent-queries.js';
import { attemptLatch, LeaseModeController } from './lease-mode.controller.js';

async function refundsOf(paymentId: string): Promise<number> {
  const [{ n }] = await sql('SELECT count(*) AS n FROM refunds WHERE payment_id = $1', [paymentId]);
  return Number(n);
}

async function providerLedger(paymentId: string): Promise<Array<{ idempotency_key: string; calls: number }>> {
  return sql('SELECT idempotency_key, calls FROM demo_provider_refunds WHERE payment_id = $1', [paymentId]);
}

/**
 * A transaction of the test's own holding a SHARE lock on the simulated provider's ledger: every
 * refund's provider call waits at its write there (its key reserved) until the test commits.
 */
async function lockProviderLedger(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: databaseUrl() });
  await client.connect();
  await client.query('BEGIN');
  await client.query('LOCK TABLE demo_provider_refunds IN SHARE MODE');
  return client;
}

/** Waits until `count` refunds wait at the provider's write, behind `lockProviderLedger()`. */
const atTheProvider = (count: number) =>
  until(async () => (await waitingOnTable('demo_provider_refunds')) === count, `${count} refund(s) at the provider`);

describe.each(HTTP_PLATFORMS)('on %s', (platform) => {
  const { startDemo, startLab } = appsOn(platform);

  describe('lease mode (demo refunds: a simulated provider answering after 600 ms)', () => {
    let demo: RunningApp;
    beforeAll(async () => (demo = await startDemo({ providerLatencyMs: 600, leaseSeconds: 30 })));
    afterAll(() => demo.close());

    async function newPayment(caller: string): Promise<string> {
      return (await send(`${demo.url}/payments`, { key: newKey(), caller, body: validPayment })).json.id;
    }

    it('executes once; a retry replays byte-identically; one refund, one provider effect under the derived key', async () => {
      const caller = newCaller();
      const paymentId = await newPayment(caller);
      const key = newKey();
      const url = `${demo.url}/payments/${paymentId}/refunds`;
      const first = await send(url, { key, caller, body: { amount: 200 } });
      expect(first.status).toBe(201);
      expect(first.json).toMatchObject({ paymentId, amount: 200 });
      const again = await send(url, { key, caller, body: { amount: 200 } });
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body.equals(first.body)).toBe(true);
      expect(await refundsOf(paymentId)).toBe(1);
      const ledger = await providerLedger(paymentId);
      expect(ledger).toHaveLength(1);
      expect(ledger[0].calls).toBe(1);
      expect(ledger[0].idempotency_key).toMatch(
        /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
      const list = await send(url, { method: 'GET', caller });
      expect(list.json).toEqual([first.json]);
    });

    it('reserves in its own committed statement: the in-flight key is visible as in_progress with a lease', async () => {
      const caller = newCaller();
      const paymentId = await newPayment(caller);
      const key = newKey();
      const ledger = await lockProviderLedger();
      try {
        const inFlight = send(`${demo.url}/payments/${paymentId}/refunds`, { key, caller, body: { amount: 1 } });
        await atTheProvider(1);
        const [row] = await sql(
          `SELECT state, locked_until > now() AS leased, lease_token IS NOT NULL AS fenced,
                  round(extract(epoch FROM locked_until - created_at)) AS lease FROM idempotency_keys WHERE caller = $1 AND key = $2`,
          [caller, key],
        );
        expect(row).toEqual({ state: 'in_progress', leased: true, fenced: true, lease: '30' });
        const duplicate = await send(`${demo.url}/payments/${paymentId}/refunds`, { key, caller, body: { amount: 1 } });
        expect(duplicate.status).toBe(409);
        // Retry-After tells the remaining lease (about 30 s), not the 1 s default.
        expect(Number(duplicate.headers['retry-after'])).toBeGreaterThanOrEqual(29);
        expect(Number(duplicate.headers['retry-after'])).toBeLessThanOrEqual(30);
        await ledger.query('COMMIT');
        expect((await inFlight).status).toBe(201);
        expect(await refundsOf(paymentId)).toBe(1);
      } finally {
        await ledger.end();
      }
    });

    it('records deterministic 4xx (404, 422) and replays them', async () => {
      const caller = newCaller();
      const paymentId = await newPayment(caller);
      const key = newKey();
      const tooMuch = await send(`${demo.url}/payments/${paymentId}/refunds`, {
        key,
        caller,
        body: { amount: 999_999 },
      });
      expect(tooMuch.status).toBe(422);
      const replay = await send(`${demo.url}/payments/${paymentId}/refunds`, {
        key,
        caller,
        body: { amount: 999_999 },
      });
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body.equals(tooMuch.body)).toBe(true);
      const unknown = `${demo.url}/payments/00000000-0000-4000-8000-000000000000/refunds`;
      const missingKey = newKey();
      expect((await send(unknown, { key: missingKey, caller, body: { amount: 1 } })).status).toBe(404);
      expect(
        (await send(unknown, { key: missingKey, caller, body: { amount: 1 } })).headers['idempotent-replayed'],
      ).toBe('true');
      expect(await providerLedger(paymentId)).toEqual([]);
    });
  });

  describe('lease mode fencing (lab: 1 s lease, each attempt held until the test releases it)', () => {
    let lab: RunningApp;
    beforeAll(async () => (lab = await startLab({}, { controllers: [LeaseModeController] })));
    afterAll(() => lab.close());

    it('a holder that fails releases its key: nothing is stored, the retry runs', async () => {
      const caller = newCaller();
      const key = newKey();
      release(attemptLatch(key, 1));
      release(attemptLatch(key, 2));
      const first = await send(`${lab.url}/lab/lease-flaky`, { key, caller, body: {} });
      expect(first.status).toBe(500);
      expect(await keyRows(caller)).toEqual([]);
      const retry = await send(`${lab.url}/lab/lease-flaky`, { key, caller, body: {} });
      expect(retry.status).toBe(201);
      expect(retry.json).toEqual({ attempt: 2 });
    });

    it("a retry takes over once the lease ends; the stale holder's late release cannot delete the new holder's row", async () => {
      const caller = newCaller();
      const key = newKey();
      const stale = send(`${lab.url}/lab/lease-flaky`, { key, caller, body: {} });
      await entered(attemptLatch(key, 1));
      expect((await send(`${lab.url}/lab/lease-flaky`, { key, caller, body: {} })).status).toBe(409);
      await untilPast(caller, 'locked_until'); // past the 1 s lease
      // The lease has ended: this retry takes the key over while the first attempt still runs.
      const takeover = send(`${lab.url}/lab/lease-flaky`, { key, caller, body: {} });
      await entered(attemptLatch(key, 2));
      release(attemptLatch(key, 1));
      expect((await stale).status).toBe(500);
      // The stale holder failed and released with its own token: the new holder's row remains.
      expect(await keyRows(caller)).toEqual([
        { key, endpoint: 'POST /lab/lease-flaky', state: 'in_progress', status: null },
      ]);
      release(attemptLatch(key, 2));
      const winner = await takeover;
      expect(winner.status).toBe(201);
      expect(winner.json).toEqual({ attempt: 2 });
      const replay = await send(`${lab.url}/lab/lease-flaky`, { key, caller, body: {} });
      expect(replay.body.equals(winner.body)).toBe(true);
    });

    it('derives stable downstream keys per (scope, key, name), and runs outside any transaction', async () => {
      const caller = newCaller();
      const key = newKey();
      const first = await send(`${lab.url}/lab/lease-keys`, { key, caller, body: {} });
      expect(first.json.inTransaction).toBe(false);
      expect(first.json.charge).not.toBe(first.json.email);
      const otherCaller = await send(`${lab.url}/lab/lease-keys`, { key, caller: newCaller(), body: {} });
      expect(otherCaller.json.charge).not.toBe(first.json.charge);
      // Run the same key again from scratch on another instance: the derived keys are the same.
      await sql('DELETE FROM idempotency_keys WHERE caller = $1', [caller]);
      const other = await startLab({}, { controllers: [LeaseModeController] });
      try {
        const again = await send(`${other.url}/lab/lease-keys`, { key, caller, body: {} });
        expect(again.headers['idempotent-replayed']).toBeUndefined();
        expect(again.json.charge).toBe(first.json.charge);
      } finally {
        await other.close();
      }
    });
  });

  describe('lease renewal (lab: 1 s lease, renewed, the handler held until the test releases it)', () => {
    let lab: RunningApp;
    beforeAll(async () => (lab = await startLab({}, { controllers: [LeaseModeController] })));
    afterAll(() => lab.close());

    async function leaseSecondsLeft(caller: string): Promise<number | null> {
      const rows = await sql(
        `SELECT extract(epoch FROM locked_until - now())::float AS left FROM idempotency_keys WHERE caller = $1 AND state = 'in_progress'`,
        [caller],
      );
      return rows.length === 1 ? Number(rows[0].left) : null;
    }

    it('a live holder keeps its key past the first lease: retries get 409 all along, the handler runs once', async () => {
      const caller = newCaller();
      const key = newKey();
      const first = send(`${lab.url}/lab/lease-slow`, { key, caller, body: {} });
      await entered(key);
      await sleep(1_600);
      // Past the first 1 s lease, the row's lease still runs: it was renewed.
      const left = await leaseSecondsLeft(caller);
      expect(left).not.toBeNull();
      expect(left!).toBeGreaterThan(0.2);
      let retry!: Answer;
      const sent = await sentQueries(
        async () => (retry = await send(`${lab.url}/lab/lease-slow`, { key, caller, body: {} })),
      );
      expect(retry.status).toBe(409);
      expect(Number(retry.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      // This instance knows its lease was renewed: the duplicate costs no round trip (renewals
      // the holder sends meanwhile aside: the named statement's EXECUTE, or behind a pooler its
      // text with the values written in).
      const renewal = RENEW_LEASE.text.slice(0, RENEW_LEASE.text.indexOf('$'));
      const isRenewal = (text: string) => text.includes(RENEW_LEASE.name) || text.startsWith(renewal);
      expect(sent.filter((text) => !isRenewal(text))).toEqual([]);
      release(key);
      const outcome = await first;
      expect(outcome.status).toBe(201);
      expect(outcome.json).toEqual({ attempt: 1 });
      expect(await keyRows(caller)).toEqual([
        { key, endpoint: 'POST /lab/lease-slow', state: 'completed', status: 201 },
      ]);
      const replay = await send(`${lab.url}/lab/lease-slow`, { key, caller, body: {} });
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body.equals(outcome.body)).toBe(true);
    });
  });

  describe("a stale holder cannot overwrite the newer holder's outcome (demo refunds, 1 s lease not renewed, 2.5 s provider)", () => {
    it('the late first holder gets 409 and records nothing; the takeover records the one refund', async () => {
      const demo = await startDemo({ providerLatencyMs: 2_500, leaseSeconds: 1, leaseRenewal: false });
      try {
        const caller = newCaller();
        const paymentId = (await send(`${demo.url}/payments`, { key: newKey(), caller, body: validPayment })).json.id;
        const url = `${demo.url}/payments/${paymentId}/refunds`;
        const key = newKey();
        // Both holders wait at the provider's write until the takeover holds the key: the stale
        // one's recording can only come after it.
        const ledgerLock = await lockProviderLedger();
        let stale: Promise<Answer>;
        let takeover: Promise<Answer>;
        try {
          stale = send(url, { key, caller, body: { amount: 300 } });
          await atTheProvider(1);
          await untilPast(caller, 'locked_until'); // past the stale holder's 1 s lease
          takeover = send(url, { key, caller, body: { amount: 300 } });
          await atTheProvider(2);
          await ledgerLock.query('COMMIT');
        } finally {
          await ledgerLock.end();
        }
        const late = await stale;
        expect(late.status).toBe(409);
        expect(late.json.type).toBe('urn:nestjs-pg-idempotency:key-in-use');
        const winner = await takeover;
        expect(winner.status).toBe(201);
        const replay = await send(url, { key, caller, body: { amount: 300 } });
        expect(replay.body.equals(winner.body)).toBe(true);
        expect(await refundsOf(paymentId)).toBe(1);
        const ledger = await providerLedger(paymentId);
        expect(ledger).toHaveLength(1);
        expect(ledger[0].calls).toBe(2);
      } finally {
        await demo.close();
      }
    });
  });
});

@Controller('lease-boundary')
@UseGuards(BearerAuthGuard)
class LeaseBoundaryController {
  @Post()
  @Idempotent({ mode: 'lease', ttl: '1s' })
  record(@Body() body: object): object {
    return body;
  }
}

describe('lease mode at the moment a key expires (express)', () => {
  const { startLab } = appsOn('express');
  let lab: RunningApp;
  beforeAll(async () => (lab = await startLab({ replayCache: false }, { controllers: [LeaseBoundaryController] })));
  afterAll(() => lab.close());

  it('a retry gets the replay or runs again, never a 409 with nothing in flight', async () => {
    const seen = await Promise.all(
      Array.from({ length: 8 }, async () => {
        const [caller, key] = [newCaller(), newKey()];
        const start = Date.now();
        await send(`${lab.url}/lease-boundary`, { key, caller, body: { x: 1 } });
        await sleep(850);
        const statuses: number[] = [];
        while (Date.now() - start < 1_350)
          statuses.push((await send(`${lab.url}/lease-boundary`, { key, caller, body: { x: 1 } })).status);
        return statuses;
      }),
    );
    expect(seen.flat().filter((status) => status !== 201)).toEqual([]);
  });
});
