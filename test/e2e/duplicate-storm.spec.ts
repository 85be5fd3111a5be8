import { setTimeout as sleep } from 'node:timers/promises';
import { paymentCount } from '../support/database.js';
import { appsOn, PLATFORMS_AND_HOSTS, type RunningApp } from '../support/apps.js';
import { type Answer, newCaller, newKey, send, validPayment } from '../support/http.js';
import { sentQueries } from '../support/sent-queries.js';

const executedOnce = (answers: Answer[]) => answers.filter((a) => a.status === 201 && !a.headers['idempotent-replayed']);

/**
 * Duplicates that arrive while their key is being reserved on the same instance wait for that
 * reservation and take its answer: a storm of one key costs PostgreSQL one reservation per
 * instance, and the statuses stay what each request would get on its own.
 */
describe.each(PLATFORMS_AND_HOSTS)('a storm of duplicates, on %s, %s', (platform, host) => {
  const { startLab } = appsOn(platform, host);

  it('100 at once on one instance: one execution, and only the executed request\'s statements reach PostgreSQL', async () => {
    const lab = await startLab({}, { latencyMs: 300 });
    try {
      // The statements of one executed request, for comparison (the pool warmed up first).
      await send(`${lab.url}/payments`, { key: newKey(), caller: newCaller(), body: validPayment });
      const single = (await sentQueries(() => send(`${lab.url}/payments`, { key: newKey(), caller: newCaller(), body: validPayment }))).length;

      const caller = newCaller();
      const key = newKey();
      let answers: Answer[] = [];
      const sent = await sentQueries(async () => {
        answers = await Promise.all(Array.from({ length: 100 }, () => send(`${lab.url}/payments`, { key, caller, body: validPayment })));
      });
      expect(executedOnce(answers)).toHaveLength(1);
      expect(answers.filter((a) => a.status === 409 || a.headers['idempotent-replayed'] === 'true')).toHaveLength(99);
      expect(sent).toHaveLength(single);
      expect(await paymentCount(caller)).toBe(1);
    } finally {
      await lab.close();
    }
  });

  describe('two instances', () => {
    let a: RunningApp;
    let b: RunningApp;
    beforeAll(async () => {
      a = await startLab({}, { latencyMs: 1_500 });
      b = await startLab({ replayCache: false });
    });
    afterAll(async () => {
      await a.close();
      await b.close();
    });

    it('50 at once on one instance while the other holds the key: all 409, from fewer reservations than requests', async () => {
      const caller = newCaller();
      const key = newKey();
      const holder = send(`${a.url}/payments`, { key, caller, body: validPayment });
      let probe: Answer;
      do {
        await sleep(20);
        probe = await send(`${b.url}/payments`, { key, caller, body: validPayment });
      } while (probe.status !== 409);
      let answers: Answer[] = [];
      const sent = await sentQueries(async () => {
        answers = await Promise.all(Array.from({ length: 50 }, () => send(`${b.url}/payments`, { key, caller, body: validPayment })));
      });
      expect(answers.map((answer) => answer.status)).toEqual(Array(50).fill(409));
      for (const answer of answers) expect(answer.headers['retry-after']).toMatch(/^[1-9]\d*$/);
      // One reservation that finds the key held sends two statements (the lock's try with the
      // lookup, then the rollback): one reservation per request sends 100 or more.
      expect(sent.length).toBeLessThan(2 * 50);
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
        Array.from({ length: 40 }, (_, i) => send(`${b.url}/payments`, { key, caller, body: i % 2 ? other : validPayment })),
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
