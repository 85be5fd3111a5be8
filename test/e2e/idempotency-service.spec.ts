import { randomUUID } from 'node:crypto';
import {
  IdempotencyConfigurationError,
  IdempotencyService,
  IdempotencyTransaction,
  UnrecordableResultError,
} from '../../src/index.js';
import { payloadFingerprint } from '../../src/key/payload-fingerprint.js';
import { appsOn, HOSTS, type RunningApp } from '../support/apps.js';
import { paymentCount, sql } from '../support/database.js';
import { newCaller } from '../support/http.js';

/** The rows `IdempotencyService.run()` keeps for `key`, in clear (the module's default storage). */
function callRows(key: string): Promise<Array<{ caller: string; endpoint: string; state: string }>> {
  return sql('SELECT caller, endpoint, state FROM idempotency_keys WHERE key = $1 ORDER BY endpoint', [key]);
}

describe.each(HOSTS)('IdempotencyService.run() on the %s host', (host) => {
  const { startLab } = appsOn('express', host);
  let lab: RunningApp;
  let service: IdempotencyService;
  /** Writes one payment of `caller` through the key's transaction (`IdempotencyTransaction`). */
  let pay: (caller: string, amount: number) => Promise<void>;
  beforeAll(async () => {
    lab = await startLab();
    service = lab.app.get(IdempotencyService);
    const tx = lab.app.get(IdempotencyTransaction);
    pay = async (caller, amount) =>
      void (await tx.manager.query(`INSERT INTO payments (caller, amount, currency) VALUES ($1, $2, 'EUR')`, [
        caller,
        amount,
      ]));
  });
  afterAll(() => lab.close());

  it('runs the function once: its write commits with the key, and later calls get the recorded result (as JSON) without running it', async () => {
    const [caller, key] = [newCaller(), randomUUID()];
    let runs = 0;
    const work = async () => {
      runs++;
      await pay(caller, 10);
      return { paid: 10, at: new Date(0) };
    };
    const first = await service.run({ scope: 'settlement', key, caller, payload: { amount: 10 } }, work);
    expect(first).toEqual({ kind: 'executed', value: { paid: 10, at: new Date(0) } });
    const again = await service.run({ scope: 'settlement', key, caller, payload: { amount: 10 } }, work);
    expect(again).toEqual({ kind: 'replayed', value: { paid: 10, at: '1970-01-01T00:00:00.000Z' } });
    expect(runs).toBe(1);
    expect(await paymentCount(caller)).toBe(1);
    expect(await callRows(key)).toEqual([{ caller, endpoint: 'CALL settlement', state: 'completed' }]);
  });

  it('50 concurrent calls with one key: one effect; every other call is told the key is held, or given the recorded result', async () => {
    const [caller, key] = [newCaller(), randomUUID()];
    const results = await Promise.all(
      Array.from({ length: 50 }, () =>
        service.run({ scope: 'settlement', key, caller }, async () => {
          await pay(caller, 5);
          return 'paid';
        }),
      ),
    );
    expect(results.filter((result) => result.kind === 'executed')).toHaveLength(1);
    for (const result of results) {
      expect(result).toEqual(
        result.kind === 'held'
          ? { kind: 'held', retryAfterSeconds: 1 }
          : { kind: expect.stringMatching(/^(executed|replayed)$/), value: 'paid' },
      );
    }
    expect(await paymentCount(caller)).toBe(1);
  });

  it('a result that is not JSON (a bigint) fails the call: told failed with UnrecordableResultError (never unavailable), its write undone, the key free', async () => {
    const [caller, key] = [newCaller(), randomUUID()];
    const unrecordable = await service.run({ scope: 'settlement', key, caller }, async () => {
      await pay(caller, 7);
      return 7n;
    });
    expect(unrecordable).toEqual({ kind: 'failed', error: expect.any(UnrecordableResultError) });
    expect((unrecordable as { error: Error }).error.message).toContain('return JSON data (a bigint as a string)');
    expect(await paymentCount(caller)).toBe(0);
    expect(await callRows(key)).toEqual([]);
    const fixed = await service.run({ scope: 'settlement', key, caller }, async () => {
      await pay(caller, 7);
      return '7';
    });
    expect(fixed).toEqual({ kind: 'executed', value: '7' });
    expect(await paymentCount(caller)).toBe(1);
  });

  it('in lease mode, a result that is not JSON is recorded as its failure: the effect ran once, and no later call runs it again', async () => {
    const key = randomUUID();
    let effects = 0;
    const charge = async () => {
      effects++;
      return 7n;
    };
    const first = await service.run({ scope: 'charge', key, mode: 'lease' }, charge);
    expect(first).toMatchObject({ kind: 'failure-recorded', error: expect.any(UnrecordableResultError) });
    expect(await service.run({ scope: 'charge', key, mode: 'lease' }, charge)).toMatchObject({
      kind: 'failed-before',
    });
    expect(effects).toBe(1);
  });

  it('a function that writes then throws leaves no write and no key: told failed, and the next call runs it again', async () => {
    const [caller, key] = [newCaller(), randomUUID()];
    const failed = await service.run({ scope: 'settlement', key, caller }, async () => {
      await pay(caller, 1);
      throw new Error('the ledger is closed');
    });
    expect(failed).toEqual({ kind: 'failed', error: expect.objectContaining({ message: 'the ledger is closed' }) });
    expect(await paymentCount(caller)).toBe(0);
    expect(await callRows(key)).toEqual([]);
    const retried = await service.run({ scope: 'settlement', key, caller }, () => pay(caller, 1));
    expect(retried).toEqual({ kind: 'executed', value: undefined });
    expect(await paymentCount(caller)).toBe(1);
  });

  it('recordFailure: a failure is recorded with its writes undone, and later calls are told failed-before without running', async () => {
    const [caller, key] = [newCaller(), randomUUID()];
    let runs = 0;
    const work = async () => {
      runs++;
      await pay(caller, 1);
      throw new Error('card expired');
    };
    const first = await service.run({ scope: 'settlement', key, caller, recordFailure: true }, work);
    expect(first).toMatchObject({ kind: 'failure-recorded', error: { message: 'card expired' } });
    expect(await service.run({ scope: 'settlement', key, caller, recordFailure: true }, work)).toEqual({
      kind: 'failed-before',
      error: 'card expired',
    });
    expect(runs).toBe(1);
    expect(await paymentCount(caller)).toBe(0);
    expect(await callRows(key)).toEqual([{ caller, endpoint: 'CALL settlement', state: 'completed' }]);
  });

  it('a result is kept as no HTTP answer: its JSON, no headers, status 0 (a recorded failure 1); rows an older build wrote as 200 and 500 with application/json are read back', async () => {
    const [caller, key, failing] = [newCaller(), randomUUID(), randomUUID()];
    await service.run({ scope: 'settlement', key, caller }, () => ({ paid: 3 }));
    await service.run({ scope: 'settlement', key: failing, caller, recordFailure: true }, () => {
      throw new Error('card expired');
    });
    const kept = (recorded: string) =>
      sql<{ status: number; response_headers: unknown; body: string }>(
        `SELECT status, response_headers, convert_from(response_body, 'UTF8') AS body FROM idempotency_keys WHERE key = $1`,
        [recorded],
      );
    expect(await kept(key)).toEqual([{ status: 0, response_headers: [], body: '{"paid":3}' }]);
    expect(await kept(failing)).toEqual([
      { status: 1, response_headers: [], body: '{"error":"card expired","attempts":1}' },
    ]);

    const scope = `written-before-${randomUUID()}`;
    const written = (recorded: string, status: number, body: string) =>
      sql(
        `INSERT INTO idempotency_keys (key, caller, endpoint, fingerprint, state, status, response_headers, response_body, expires_at)
         VALUES ($1, $2, $3, $4, 'completed', $5, '[["content-type","application/json"]]', convert_to($6, 'UTF8'), now() + interval '1 hour')`,
        [recorded, caller, `CALL ${scope}`, payloadFingerprint(undefined), status, body],
      );
    await written('old-value', 200, '{"paid":4}');
    await written('old-failure', 500, '{"error":"card declined","attempts":3}');
    const never = () => {
      throw new Error('ran again');
    };
    expect(await service.run({ scope, key: 'old-value', caller }, never)).toEqual({
      kind: 'replayed',
      value: { paid: 4 },
    });
    expect(await service.run({ scope, key: 'old-failure', caller }, never)).toEqual({
      kind: 'failed-before',
      error: 'card declined',
    });
  });

  it('the same key with another payload is refused without running; another scope or caller is another key', async () => {
    const [caller, other, key] = [newCaller(), newCaller(), randomUUID()];
    let runs = 0;
    const work = () => ++runs;
    expect(await service.run({ scope: 'settlement', key, caller, payload: { amount: 1 } }, work)).toEqual({
      kind: 'executed',
      value: 1,
    });
    expect(await service.run({ scope: 'settlement', key, caller, payload: { amount: 2 } }, work)).toEqual({
      kind: 'mismatch',
    });
    expect(await service.run({ scope: 'refund', key, caller, payload: { amount: 2 } }, work)).toEqual({
      kind: 'executed',
      value: 2,
    });
    expect(await service.run({ scope: 'settlement', key, caller: other, payload: { amount: 2 } }, work)).toEqual({
      kind: 'executed',
      value: 3,
    });
    expect(runs).toBe(3);
  });

  it('lease mode: the function runs once under a lease, and its result is recorded', async () => {
    const [caller, key] = [newCaller(), randomUUID()];
    let calls = 0;
    const charge = async () => ({ charge: ++calls });
    expect(await service.run({ scope: 'provider-charge', key, caller, mode: 'lease' }, charge)).toEqual({
      kind: 'executed',
      value: { charge: 1 },
    });
    expect(await service.run({ scope: 'provider-charge', key, caller, mode: 'lease' }, charge)).toEqual({
      kind: 'replayed',
      value: { charge: 1 },
    });
    expect(calls).toBe(1);
  });

  it('a call a row cannot hold throws IdempotencyConfigurationError, naming the scope, and keeps nothing', async () => {
    const caller = newCaller();
    let runs = 0;
    const work = () => ++runs;
    await expect(service.run({ scope: 'settlement', key: '', caller }, work)).rejects.toThrow(
      /IdempotencyService\.run\(\) in scope "settlement": the key is missing/,
    );
    await expect(service.run({ scope: 'settlement', key: 'x'.repeat(256), caller }, work)).rejects.toThrow(
      /the key is longer than 255 characters/,
    );
    await expect(service.run({ scope: 'settlement', key: 'a key', caller }, work)).rejects.toThrow(
      /the key is not printable ASCII/,
    );
    await expect(service.run({ scope: 'settlement', key: 'k', caller: 'a\0b' }, work)).rejects.toBeInstanceOf(
      IdempotencyConfigurationError,
    );
    await expect(service.run({ scope: '', key: 'k', caller }, work)).rejects.toThrow(/the scope must be a name/);
    await expect(service.run({ scope: 'settlement', key: 'k', caller, mode: 'once' as never }, work)).rejects.toThrow(
      /option "mode"/,
    );
    expect(runs).toBe(0);
    expect(await sql('SELECT 1 FROM idempotency_keys WHERE caller = $1', [caller])).toEqual([]);
  });
});
