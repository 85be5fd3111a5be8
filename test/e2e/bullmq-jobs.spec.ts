import { randomUUID } from 'node:crypto';
import { type Job, Queue, QueueEvents } from 'bullmq';
import { sql } from '../support/database.js';
import { newCaller } from '../support/http.js';
import { amounts, gone } from '../support/message-consumers.js';
import { type DemoProcess, startAppProcess, waitFor } from '../support/processes.js';
import { describeWith } from '../support/services.js';

/** The worker app: a @nestjs/bullmq processor whose process() is @IdempotentJob(). */
const WORKER_APP = 'test/e2e/job-worker.app.mjs';
/** The hosts the processor writes through: TypeORM, and the module on a node-postgres pool (Drizzle). */
const HOSTS = ['typeorm', 'drizzle'] as const;

const redis = () => {
  const url = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  return { host: url.hostname, port: Number(url.port || 6379) };
};

interface PaymentJob {
  payer: string;
  amount: number;
  order?: string;
  holdMs?: number;
  fail?: 'once' | 'always';
  kill?: 'before-commit' | 'after-commit';
}

/** The rows of a key in a queue's scope (the default scope of @IdempotentJob() is the queue's name). */
function keyRows(queue: string, key: string): Promise<Array<{ state: string }>> {
  return sql(`SELECT state FROM idempotency_keys WHERE key = $1 AND endpoint = $2`, [key, `CALL ${queue}`]);
}

describeWith('redis')('BullMQ jobs with @IdempotentJob(), with worker processes', () => {
  describe.each(HOSTS)('on the %s host', (host) => {
    const workers: DemoProcess[] = [];
    let queue: Queue;
    let events: QueueEvents;
    let name: string;
    const started = async (env: Record<string, string> = {}) => {
      const worker = await startAppProcess(WORKER_APP, { HOST: host, QUEUE: name, ...env });
      workers.push(worker);
      return worker;
    };
    const open = async () => {
      name = `payments-${host}-${randomUUID()}`;
      queue = new Queue(name, { connection: redis() });
      events = new QueueEvents(name, { connection: redis() });
      await events.waitUntilReady();
    };
    const close = async () => {
      await Promise.all(workers.splice(0).map((worker) => worker.kill().catch(() => undefined)));
      await events.close();
      await queue.obliterate({ force: true });
      await queue.close();
    };
    const add = (data: PaymentJob, options: { jobId?: string; attempts?: number } = {}) =>
      queue.add('pay', data, { backoff: { type: 'fixed', delay: 100 }, ...options });
    const finished = (job: Job) => job.waitUntilFinished(events, 60_000);

    describe("two workers on one queue (the key: the job's data.order, else its id)", () => {
      beforeAll(async () => {
        await open();
        await Promise.all([started({ KEY: 'data' }), started({ KEY: 'data' })]);
      });
      afterAll(close);

      it('the same order added under two job ids runs once: both jobs complete with its result', async () => {
        const [payer, order] = [newCaller(), randomUUID()];
        const first = await add({ payer, amount: 21, order });
        const result = await finished(first);
        const second = await add({ payer, amount: 21, order });
        expect(await finished(second)).toEqual(result);
        expect(await amounts(payer)).toEqual([21]);
        expect(await keyRows(name, order)).toEqual([{ state: 'completed' }]);
      });

      it('50 jobs of one order at once: one payment; all 50 complete with the same result', async () => {
        const [payer, order] = [newCaller(), randomUUID()];
        const jobs = await queue.addBulk(
          Array.from({ length: 50 }, () => ({ name: 'pay', data: { payer, amount: 22, order, holdMs: 300 } })),
        );
        const results = await Promise.all(jobs.map(finished));
        expect(new Set(results.map((result) => JSON.stringify(result))).size).toBe(1);
        expect(await amounts(payer)).toEqual([22]);
      });

      it('a job that writes and fails on its first attempt commits its writes once, on its retry', async () => {
        const payer = newCaller();
        const job = await add({ payer, amount: 23, fail: 'once' }, { attempts: 3 });
        expect(await finished(job)).toEqual({ paid: 23, pid: expect.any(Number) });
        expect((await queue.getJob(job.id!))?.attemptsMade).toBe(2);
        expect(await amounts(payer)).toEqual([23]);
      });

      it('a job that writes and then fails on every attempt keeps nothing: no payment, no key; it fails after its last attempt', async () => {
        const payer = newCaller();
        const job = await add({ payer, amount: 24, fail: 'always' }, { attempts: 2 });
        await expect(finished(job)).rejects.toThrow(/fails \(attempt 2\)/);
        expect(await amounts(payer)).toEqual([]);
        expect(await keyRows(name, job.id!)).toEqual([]);
      });

      it('a job added again under a used key with another payload fails for good, without running', async () => {
        const [payer, order] = [newCaller(), randomUUID()];
        await finished(await add({ payer, amount: 25, order }));
        const other = await add({ payer, amount: 26, order }, { attempts: 3 });
        await expect(finished(other)).rejects.toThrow(/its key was used with another payload/);
        expect((await queue.getJob(other.id!))?.attemptsMade).toBe(1);
        expect(await amounts(payer)).toEqual([25]);
      });
    });

    describe("a worker that dies (a queue of its own per test; the key: the job's id)", () => {
      beforeEach(open);
      afterEach(close);

      it.each(['before-commit', 'after-commit'] as const)(
        'a worker SIGKILLed %s: the stalled job is picked up by another worker, and its payment is made once',
        async (kill) => {
          const victim = await started();
          const payer = newCaller();
          const job = await add({ payer, amount: 27, kill });
          await waitFor('the worker to kill itself', async () => gone(victim));
          // The committed outcome is in the table (after-commit) or nothing is (before-commit).
          expect(await amounts(payer)).toEqual(kill === 'after-commit' ? [27] : []);
          const survivor = await started({ SURVIVES: '1' });
          const result = (await finished(job)) as { paid: number; pid: number };
          expect(result.paid).toBe(27);
          // After the commit, the recorded result (the victim's pid); before it, the survivor ran it.
          expect(result.pid).toBe(kill === 'after-commit' ? victim.child.pid : survivor.child.pid);
          expect(await amounts(payer)).toEqual([27]);
          expect(await keyRows(name, job.id!)).toEqual([{ state: 'completed' }]);
        },
      );
    });
  });
});
