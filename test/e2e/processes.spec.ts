import pg from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { SWEEP_LOCK_ID } from '../../src/operations/sweeper/sweep.sql.js';
import { keyRows, paymentCount, seedKeys, sql, until } from '../support/database.js';
import { type Answer, newCaller, newKey, send, validPayment } from '../support/http.js';
import { databaseUrl, DEMO_HOSTS, hostSettings, HTTP_PLATFORMS } from '../support/apps.js';
import { type DemoProcess, startDemoProcess, waitFor } from '../support/processes.js';

/** Every answer for one key: exactly one execution, the others 409 or byte-identical replays. */
function expectOneExecutionPerKey(answers: Array<{ key: string; answer: Answer }>, keys: string[]): void {
  const executed = answers.filter(({ answer }) => answer.status === 201 && !answer.headers['idempotent-replayed']);
  expect(executed.map(({ key }) => key).sort()).toEqual([...keys].sort());
  for (const { key, answer } of answers) {
    const original = executed.find((e) => e.key === key)!.answer;
    if (answer === original) continue;
    if (answer.status === 409) {
      expect(answer.headers['retry-after']).toMatch(/^[1-9]\d*$/);
      continue;
    }
    // Any other answer must be the byte-identical replay (the status shows what came instead).
    expect({ status: answer.status, replayed: answer.headers['idempotent-replayed'] }).toEqual({
      status: 201,
      replayed: 'true',
    });
    expect(answer.body.equals(original.body)).toBe(true);
  }
}

describe.each(HTTP_PLATFORMS)('on %s', (platform) => {
  describe('a lease-mode request whose process is killed mid-handler', () => {
    it('is taken over after the lease by a restarted process: one refund, one provider effect per derived key', async () => {
      let demo: DemoProcess = await startDemoProcess({
        DEMO_PROVIDER_LATENCY_MS: '20000',
        DEMO_LEASE_SECONDS: '2',
        DEMO_PLATFORM: platform,
      });
      try {
        const caller = newCaller();
        const paymentId = (await send(`${demo.url}/payments`, { key: newKey(), caller, body: validPayment })).json.id;
        const key = newKey();
        const inFlight = send(`${demo.url}/payments/${paymentId}/refunds`, {
          key,
          caller,
          body: { amount: 100 },
        }).catch((e: Error) => e);
        // The provider has applied the refund and is slow to answer: the worst moment to die.
        await waitFor(
          'the provider to apply the refund',
          async () =>
            (await sql('SELECT 1 FROM demo_provider_refunds WHERE payment_id = $1', [paymentId])).length === 1,
        );
        await demo.kill();
        expect(await inFlight).toHaveProperty('code', 'ECONNRESET');
        // Lease mode committed the reservation: the dead holder's row stays, leased, until its lease ends.
        expect(await keyRows(caller)).toContainEqual(expect.objectContaining({ key, state: 'in_progress' }));

        demo = await startDemoProcess({
          DEMO_PROVIDER_LATENCY_MS: '0',
          DEMO_LEASE_SECONDS: '2',
          DEMO_PLATFORM: platform,
        });
        const url = `${demo.url}/payments/${paymentId}/refunds`;
        const early = await send(url, { key, caller, body: { amount: 100 } });
        if (early.status === 409) {
          expect(Number(early.headers['retry-after'])).toBeLessThanOrEqual(2);
          await sleep(Number(early.headers['retry-after']) * 1000 + 100);
        }
        const retry = early.status === 409 ? await send(url, { key, caller, body: { amount: 100 } }) : early;
        expect(retry.status).toBe(201);
        expect(retry.headers['idempotent-replayed']).toBeUndefined();
        const [{ n: refunds }] = await sql('SELECT count(*) AS n FROM refunds WHERE payment_id = $1', [paymentId]);
        expect(Number(refunds)).toBe(1);
        const ledger = await sql('SELECT idempotency_key, calls FROM demo_provider_refunds WHERE payment_id = $1', [
          paymentId,
        ]);
        expect(ledger).toHaveLength(1);
        expect(ledger[0].calls).toBe(2);
        const replay = await send(url, { key, caller, body: { amount: 100 } });
        expect(replay.body.equals(retry.body)).toBe(true);
      } finally {
        await demo.kill();
      }
    });
  });

  describe.each(DEMO_HOSTS)('three app processes on one PostgreSQL, %s', (host) => {
    let demos: DemoProcess[] = [];
    beforeAll(async () => {
      const env = {
        DEMO_LATENCY_MS: '200',
        DEMO_PROVIDER_LATENCY_MS: '200',
        DEMO_LEASE_SECONDS: '30',
        DEMO_PLATFORM: platform,
        ...hostSettings(host).env,
      };
      demos = await Promise.all([startDemoProcess(env), startDemoProcess(env), startDemoProcess(env)]);
    });
    afterAll(async () => {
      const codes = await Promise.all(demos.map((demo) => demo.stop()));
      expect(codes).toEqual([0, 0, 0]);
    });

    async function storm(path: (key: string) => string, caller: string, body: object): Promise<string[]> {
      const keys = Array.from({ length: 20 }, () => newKey());
      const answers = await Promise.all(
        keys.flatMap((key, k) =>
          Array.from({ length: 10 }, (_, i) =>
            send(`${demos[(k + i) % 3].url}${path(key)}`, { key, caller, body }).then((answer) => ({ key, answer })),
          ),
        ),
      );
      expect(answers).toHaveLength(200);
      expectOneExecutionPerKey(answers, keys);
      return keys;
    }

    it('transactional mode: 200 concurrent requests, 20 keys × 10: exactly 20 payments', async () => {
      const caller = newCaller();
      await storm(() => '/payments', caller, validPayment);
      expect(await paymentCount(caller)).toBe(20);
    });

    it('a declined payment (402 thrown after the write) keeps its key locked until the decline is recorded: a duplicate on another process gets 409, never a second execution', async () => {
      // The test holds a SHARE lock on idempotency_keys, so the key row's INSERT waits: the
      // recording of the decline is held at its slowest point, where the key's lock must still
      // be taken. A duplicate on another process must then find the key in use, not run again
      // (and wait for the same table lock in its own recording).
      const caller = newCaller();
      const key = newKey();
      const declined = { amount: 1_000_000, currency: 'EUR' };
      const blocker = new pg.Client({ connectionString: databaseUrl() });
      await blocker.connect();
      const waitingOnKeys = async (): Promise<number> => {
        const [{ n }] = await sql(
          `SELECT count(*) AS n FROM pg_locks JOIN pg_stat_activity USING (pid)
           WHERE NOT granted AND relation = 'idempotency_keys'::regclass AND datname = current_database()
             AND query NOT LIKE 'PREPARE%'`,
        );
        return Number(n);
      };
      // The key's statements are prepared once per connection: have both processes prepare them
      // now, on the connection their next request will reuse, not behind the table lock.
      for (const demo of demos.slice(0, 2))
        expect((await send(`${demo.url}/payments`, { key: newKey(), caller, body: validPayment })).status).toBe(201);
      try {
        await blocker.query('BEGIN');
        await blocker.query('LOCK TABLE idempotency_keys IN SHARE MODE');
        const first = send(`${demos[0].url}/payments`, { key, caller, body: declined });
        await until(async () => (await waitingOnKeys()) === 1, 'the decline waiting to be recorded');
        let answered = false;
        const duplicate = send(`${demos[1].url}/payments`, { key, caller, body: declined }).finally(
          () => (answered = true),
        );
        // Old behaviour: the duplicate took the freed lock, ran, and now waits to record too.
        await until(async () => answered || (await waitingOnKeys()) === 2, 'the duplicate answered or recording');
        await blocker.query('COMMIT');
        expect(answered).toBe(true);
        expect((await duplicate).status).toBe(409);
        expect((await first).status).toBe(402);
      } finally {
        await blocker.end();
      }
      const replay = await send(`${demos[2].url}/payments`, { key, caller, body: declined });
      expect(replay.status).toBe(402);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(await paymentCount(caller)).toBe(2); // the two warm-up payments, not the declined one
      expect(await keyRows(caller)).toContainEqual(expect.objectContaining({ key, state: 'completed', status: 402 }));
    });

    it('lease mode: 200 concurrent refund requests, 20 keys × 10: exactly 20 refunds and 20 provider effects', async () => {
      const caller = newCaller();
      const paymentId = (await send(`${demos[0].url}/payments`, { key: newKey(), caller, body: validPayment })).json.id;
      await storm(() => `/payments/${paymentId}/refunds`, caller, { amount: 1 });
      const [{ n }] = await sql('SELECT count(*) AS n FROM refunds WHERE payment_id = $1', [paymentId]);
      expect(Number(n)).toBe(20);
      const ledger = await sql('SELECT calls FROM demo_provider_refunds WHERE payment_id = $1', [paymentId]);
      expect(ledger.map((row) => row.calls)).toEqual(Array(20).fill(1));
    });
  });
});

describe('two app processes with the sweeper on', () => {
  const seeded = 20_000; // 20 batches of the default 1,000
  let demos: DemoProcess[] = [];
  let lockHolder: pg.Client | undefined;
  afterAll(async () => {
    await lockHolder?.end().catch(() => undefined);
    await Promise.all(demos.map((demo) => demo.kill().catch(() => undefined)));
  });

  it('sweep only while no one else holds the sweep lock, then until every expired row is gone, and both shut down cleanly', async () => {
    const caller = newCaller();
    const countKeys = async () =>
      Number((await sql('SELECT count(*) AS n FROM idempotency_keys WHERE caller = $1', [caller]))[0].n);
    lockHolder = new pg.Client({ connectionString: databaseUrl() });
    await lockHolder.connect();
    await lockHolder.query('SELECT pg_advisory_lock($1::bigint)', [SWEEP_LOCK_ID]);
    const env = { IDEMPOTENCY_SWEEP_INTERVAL_MS: '100' };
    demos = await Promise.all([startDemoProcess(env), startDemoProcess(env)]);
    await seedKeys(caller, seeded, '-1 second');
    // Ten sweep intervals of each process with the lock held elsewhere: none of them deletes.
    await sleep(1_000);
    expect(await countKeys()).toBe(seeded);

    await lockHolder.query('SELECT pg_advisory_unlock($1::bigint)', [SWEEP_LOCK_ID]);
    let mostAtOnce = 0;
    await waitFor(
      'the sweepers to delete every seeded row',
      async () => {
        const holders = await sql(
          `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
           AND classid::bigint = ($1::bigint >> 32) & 4294967295 AND objid::bigint = $1::bigint & 4294967295`,
          [SWEEP_LOCK_ID],
        );
        mostAtOnce = Math.max(mostAtOnce, holders.length);
        return (await countKeys()) === 0;
      },
      60_000,
    );
    expect(mostAtOnce).toBeLessThanOrEqual(1);
    const codes = await Promise.all(demos.map((demo) => demo.stop()));
    expect(codes).toEqual([0, 0]);
    const swept = demos.map((demo) => /swept (\d+) expired/.exec(demo.output())?.[1]);
    expect(swept.some((count) => count !== undefined)).toBe(true);
  }, 120_000);
});
