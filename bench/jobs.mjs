// The BullMQ pair of `npm run bench` (and `npm run bench:jobs` alone): the same processor plain and
// under @IdempotentJob() (bench/servers/job-worker.mjs), each on a queue of its own on the
// machine's Redis, in interleaved rounds (the first of the pair alternating): a backlog of
// `backlog` jobs added at once, drained; jobs per second from the first row written to the last.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { Queue } from 'bullmq';
import { startDatabase } from './database.mjs';
import { medianAndRange, nodeLine } from './interleaved.mjs';
import { nodeBinary } from '../scripts/node-lines.mjs';
import { killAll, start } from './processes.mjs';

const REDIS = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');

export async function measureJobs(database, { rounds, execPath, backlog = 2_000, log }) {
  await database.sql(
    'CREATE TABLE IF NOT EXISTS bench_jobs (batch text NOT NULL, committed_at timestamptz NOT NULL DEFAULT clock_timestamp())',
  );
  const connection = { host: REDIS.hostname, port: Number(REDIS.port || 6379) };
  const modes = ['plain', 'module'];
  const names = Object.fromEntries(modes.map((mode) => [mode, `bench-${mode}-${randomUUID()}`]));
  const queues = Object.fromEntries(modes.map((mode) => [mode, new Queue(names[mode], { connection })]));
  const workers = {};
  try {
    for (const mode of modes) {
      workers[mode] = await start('servers/job-worker.mjs', {
        name: `${mode} BullMQ worker`,
        env: { DATABASE_URL: database.url, JOBS: mode, QUEUE: names[mode] },
        execPath,
      });
    }
    const written = async (batch) =>
      (await database.sql('SELECT count(*)::int AS n FROM bench_jobs WHERE batch = $1', [batch]))[0].n;
    const drain = async (mode, batch, count) => {
      await queues[mode].addBulk(
        Array.from({ length: count }, () => ({ name: 'job', data: { batch }, opts: { removeOnComplete: true } })),
      );
      for (const deadline = Date.now() + 300_000; (await written(batch)) < count;) {
        if (Date.now() > deadline) throw new Error(`the ${mode} worker did not write ${count} rows within 5 minutes`);
        await sleep(50);
      }
    };
    const results = Object.fromEntries(modes.map((mode) => [mode, []]));
    for (let round = 1; round <= rounds; round++) {
      for (const mode of round % 2 ? modes : [...modes].reverse()) {
        await drain(mode, `warm-${mode}-${round}-${randomUUID()}`, 300);
        log(`round ${round}: ${mode} BullMQ worker, a backlog of ${backlog}`);
        const batch = `backlog-${mode}-${round}-${randomUUID()}`;
        await drain(mode, batch, backlog);
        const [span] = await database.sql(
          'SELECT extract(epoch FROM max(committed_at) - min(committed_at)) * 1000 AS ms FROM bench_jobs WHERE batch = $1',
          [batch],
        );
        results[mode].push({ jobsPerSecond: (backlog - 1) / (Number(span.ms) / 1000), backlog });
      }
    }
    return results;
  } finally {
    await Promise.all(Object.values(workers).map((worker) => worker.kill()));
    for (const queue of Object.values(queues)) {
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
    }
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const database = await startDatabase();
  try {
    const rounds = Number(process.env.AB_ROUNDS || 5);
    const execPath = nodeBinary(process.env.BENCH_NODE || process.execPath);
    const results = await measureJobs(database, { rounds, execPath, log: console.log });
    const ratios = results.module.map((run, i) => run.jobsPerSecond / results.plain[i].jobsPerSecond);
    for (const mode of ['plain', 'module'])
      console.log(`${mode}: ${results[mode].map((run) => run.jobsPerSecond.toFixed(0)).join(', ')} jobs/s`);
    console.log(`@IdempotentJob() / plain processor, jobs/s (backlog): ${medianAndRange(ratios)}, ${nodeLine()}`);
  } finally {
    killAll();
    await database.stop();
  }
}
