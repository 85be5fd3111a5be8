import { keyLockHolders, paymentCount, until } from '../support/database.js';
import { appDatabaseUrl, appsOn, PLATFORMS_AND_HOSTS, type RunningApp } from '../support/apps.js';
import { LabController } from '../support/common-routes.controller.js';
import { type Answer, newCaller, newKey, send, validPayment } from '../support/http.js';
import { release } from '../support/latch.js';
import { PostgresProxy, throughProxy } from '../support/postgres-proxy.js';
import { sentQueries } from '../support/sent-queries.js';

const executedOnce = (answers: Answer[]) =>
  answers.filter((a) => a.status === 201 && !a.headers['idempotent-replayed']);

/** The statements sent, by kind (`EXECUTE name`, `START TRANSACTION` …), without the per-connection PREPAREs. */
const statements = (sent: string[]): string[] =>
  sent
    .filter((text) => !text.startsWith('PREPARE'))
    .map((text) => text.replace(/\(.*$/s, '').replace(/\s+/g, ' ').trim());

/**
 * Duplicates that arrive while their key is being reserved on the same instance wait for that
 * reservation and take its answer: a storm of one key costs PostgreSQL one reservation per
 * instance, and the statuses stay what each request would get on its own.
 */
describe.each(PLATFORMS_AND_HOSTS)('a storm of duplicates, on %s, %s', (platform, host) => {
  const { startLab } = appsOn(platform, host);

  describe('one instance, PostgreSQL answering 200 ms late', () => {
    const proxy = new PostgresProxy();
    let lab: RunningApp;
    beforeAll(async () => {
      await proxy.start(new URL(appDatabaseUrl()));
      lab = await throughProxy(proxy, () => startLab({}, { latencyMs: 300 }));
    });
    afterAll(async () => {
      await lab.close();
      await proxy.stop();
    });

    it("100 at once: one execution, and only the executed request's statements reach PostgreSQL", async () => {
      // The statements of one executed request, for comparison (the pool warmed up first).
      await send(`${lab.url}/payments`, { key: newKey(), caller: newCaller(), body: validPayment });
      const single = statements(
        await sentQueries(() =>
          send(`${lab.url}/payments`, { key: newKey(), caller: newCaller(), body: validPayment }),
        ),
      );

      // Every duplicate arrives while the first request's reservation waits for its answer.
      proxy.answerDelayMs = 200;
      const caller = newCaller();
      const key = newKey();
      let answers: Answer[] = [];
      const sent = await sentQueries(async () => {
        answers = await Promise.all(
          Array.from({ length: 100 }, () => send(`${lab.url}/payments`, { key, caller, body: validPayment })),
        );
      });
      proxy.answerDelayMs = 0;
      expect(executedOnce(answers)).toHaveLength(1);
      expect(answers.filter((a) => a.status === 409 || a.headers['idempotent-replayed'] === 'true')).toHaveLength(99);
      expect(statements(sent)).toEqual(single);
      expect(await paymentCount(caller)).toBe(1);
    });
  });

  describe('two instances', () => {
    let a: RunningApp;
    let b: RunningApp;
    beforeAll(async () => {
      a = await startLab({}, { controllers: [LabController] });
      b = await startLab({ replayCache: false }, { controllers: [LabController] });
      // Both warmed up: pools connected, statements prepared.
      for (const app of [a, b])
        await send(`${app.url}/payments`, { key: newKey(), caller: newCaller(), body: validPayment });
    });
    afterAll(async () => {
      await a.close();
      await b.close();
    });

    it('50 at once on one instance while the other holds the key: all 409, from fewer reservations than requests', async () => {
      const caller = newCaller();
      const key = newKey();
      // a's holder keeps the key (lab/held-write) until the test releases it.
      const holder = send(`${a.url}/lab/held-write`, { key, caller, body: {} });
      await until(async () => (await keyLockHolders(key, caller, 'POST /lab/held-write')) === 1, "a's lock on the key");
      let answers: Answer[] = [];
      const sent = await sentQueries(async () => {
        answers = await Promise.all(
          Array.from({ length: 50 }, () => send(`${b.url}/lab/held-write`, { key, caller, body: {} })),
        );
      });
      expect(answers.map((answer) => answer.status)).toEqual(Array(50).fill(409));
      for (const answer of answers) expect(answer.headers['retry-after']).toMatch(/^[1-9]\d*$/);
      // One reservation that finds the key held sends two statements (the lock's try with the
      // lookup, then the rollback): one reservation per request sends 100 or more.
      expect(sent.length).toBeLessThan(2 * 50);
      release(caller);
      expect((await holder).status).toBe(201);
      expect(await paymentCount(caller)).toBe(1);
    });

    it('a shared answer goes only to requests with the same payload: a completed key replays its own payload and refuses another (422)', async () => {
      const caller = newCaller();
      const key = newKey();
      const first = await send(`${a.url}/payments`, { key, caller, body: validPayment });
      expect(first.status).toBe(201);
      const other = { ...validPayment, amount: validPayment.amount + 1 };
      // b keeps no replay cache: each wave of requests reads the key from PostgreSQL, through one
      // reservation in flight at a time.
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          send(`${b.url}/payments`, { key, caller, body: i % 2 ? other : validPayment }),
        ),
      );
      answers.forEach((answer, i) => {
        if (i % 2) {
          expect(answer.status).toBe(422);
        } else {
          expect(answer.status).toBe(201);
          expect(answer.headers['idempotent-replayed']).toBe('true');
          expect(answer.body.equals(first.body)).toBe(true);
        }
      });
      expect(await paymentCount(caller)).toBe(1);
    });
  });
});
