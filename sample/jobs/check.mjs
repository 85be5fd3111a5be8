// What docs/jobs.md promises, proved on this worker as a producer sees it: the same order added
// under two job ids is charged once and both jobs complete with its result; the same order with
// another amount fails for good, after one attempt; a job the database refuses is tried as often as
// its `attempts` say, writes nothing and leaves its key free; ten jobs of one order at once over two
// workers charge it once. `npm run build` and `npm run migrate`, then `npm run check` with
// DATABASE_URL and REDIS_URL set.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { check, database, proved, startApp } from '../check-kit.mjs';

const folder = import.meta.dirname;
const { Queue } = createRequire(join(folder, 'package.json'))('bullmq');
const db = database(folder);
// A queue of this run's own, which the workers take by PAYMENTS_QUEUE.
const queueName = `payments-${process.pid}-${Date.now()}`;
const queue = new Queue(queueName, { connection: { url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' } });
const worker = { http: false, readyLine: /worker started/, env: { PAYMENTS_QUEUE: queueName } };
const payments = async (customer) =>
  (await db.query('SELECT count(*)::int AS n FROM payments WHERE caller = $1', [customer])).rows[0].n;
const keys = async (orderId) =>
  (
    await db.query('SELECT count(*)::int AS n FROM idempotency_keys WHERE key = $1 AND endpoint = $2', [
      orderId,
      `CALL ${queueName}`,
    ])
  ).rows[0].n;

/** The job once BullMQ is done with it: completed, or failed after its attempts. */
async function finished(jobId) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    // The state first, then the job: a job read before its state could lack its result.
    const state = await queue.getJobState(jobId);
    if (state === 'completed' || state === 'failed') return { state, job: await queue.getJob(jobId) };
    if (Date.now() > deadline) throw new Error(`job ${jobId} is still ${state} after 10 s`);
    await sleep(100);
  }
}

try {
  await check(
    folder,
    async () => {
      // A second worker on the same queue, started while the first proofs run.
      const starting = startApp(folder, worker);
      starting.catch(() => undefined);
      let second;
      try {
        const run = `${process.pid}-${Date.now()}`;
        const alice = `alice-${run}`;
        const order = { orderId: `order-${run}`, customer: alice, amount: 1250 };
        await queue.add('charge', order, { jobId: `${order.orderId}-a` });
        await queue.add('charge', order, { jobId: `${order.orderId}-b` });
        const [a, b] = [await finished(`${order.orderId}-a`), await finished(`${order.orderId}-b`)];
        proved(
          a.state === 'completed' && b.state === 'completed',
          'the same order added under two job ids: both jobs complete',
          [a.state, b.state],
        );
        proved(
          typeof a.job.returnvalue?.payment === 'string' && b.job.returnvalue?.payment === a.job.returnvalue.payment,
          'both with the one payment id (one ran, the other replayed it)',
          [a.job.returnvalue, b.job.returnvalue],
        );
        proved((await payments(alice)) === 1, 'one payment row for the order');

        await queue.add('charge', { ...order, amount: 99 }, { jobId: `${order.orderId}-c`, attempts: 3 });
        const other = await finished(`${order.orderId}-c`);
        proved(
          other.state === 'failed' && other.job.attemptsMade === 1,
          'the same order with another amount fails for good, after one attempt of its three',
          [other.state, other.job.attemptsMade, other.job.failedReason],
        );
        proved((await payments(alice)) === 1, 'and charges nothing');

        const bob = `bob-${run}`;
        const refused = { orderId: `order-${run}-refused`, customer: bob, amount: 0 };
        const retried = { attempts: 3, backoff: { type: 'fixed', delay: 100 } };
        await queue.add('charge', refused, { ...retried, jobId: `${refused.orderId}-a` });
        const failing = await finished(`${refused.orderId}-a`);
        proved(
          failing.state === 'failed' && failing.job.attemptsMade === 3,
          'a job the database refuses (amount 0) is tried by its attempts (3), then failed',
          [failing.state, failing.job.attemptsMade, failing.job.failedReason],
        );
        proved(
          (await payments(bob)) === 0 && (await keys(refused.orderId)) === 0,
          'it wrote nothing, and its key is free',
        );
        await queue.add('charge', { ...refused, amount: 700 }, { ...retried, jobId: `${refused.orderId}-b` });
        const fixed = await finished(`${refused.orderId}-b`);
        proved(
          fixed.state === 'completed' && (await payments(bob)) === 1 && (await keys(refused.orderId)) === 1,
          'the order added again, fixed, is charged once: the failures did not spend its key',
          fixed.state,
        );

        second = await starting;
        const carol = `carol-${run}`;
        const busy = { orderId: `order-${run}-busy`, customer: carol, amount: 300 };
        const ids = Array.from({ length: 10 }, (_, at) => `${busy.orderId}-${at}`);
        await queue.addBulk(ids.map((jobId) => ({ name: 'charge', data: busy, opts: { jobId } })));
        const jobs = await Promise.all(ids.map(finished));
        const results = new Set(jobs.map(({ state, job }) => `${state} ${job.returnvalue?.payment}`));
        proved(
          results.size === 1 && jobs[0].state === 'completed',
          'ten jobs of one order at once over two workers: all complete, with one payment id',
          [...results],
        );
        proved((await payments(carol)) === 1, 'one payment row for the order');
      } catch (error) {
        throw new Error(`${error.message}\nthe second worker's output:\n${second?.output ?? ''}`);
      } finally {
        await (second ?? (await starting.catch(() => undefined)))?.stop();
      }
    },
    worker,
  );
} finally {
  await queue.obliterate({ force: true }).catch(() => undefined);
  await queue.close();
  await db.end();
}
