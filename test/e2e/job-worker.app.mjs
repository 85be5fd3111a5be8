// A Nest app processing the BullMQ queue QUEUE on Redis (REDIS_URL) exactly once, as a process of
// its own: a WorkerHost of @nestjs/bullmq whose process() is @IdempotentJob() (in the queue's
// scope; the key is the job's id, or with KEY=data its data.order when it has one), writing one
// payment (data.payer, data.amount) through the host HOST (../support/app-hosts.mjs; default
// 'drizzle') and returning { paid, pid }. data.holdMs: holds that long after the write;
// data.fail === 'once': throws after the write on the job's first attempt, 'always': on every
// attempt; data.kill === 'before-commit': SIGKILLs itself after the write; 'after-commit': once the
// outcome is committed, before BullMQ completes the job; SURVIVES=1: never kills itself. The
// worker: concurrency CONCURRENCY (8), lockDuration LOCK_MS (2000), stalledInterval STALLED_MS
// (1000). Prints "listening on <url>".
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { BullModule, Processor, WorkerHost } from '@nestjs/bullmq';
import { IdempotencyEvents, IdempotentJob } from 'nestjs-pg-idempotency';
import { hostOf } from '../support/app-hosts.mjs';
import { decorate } from '../support/decorate.mjs';

const env = process.env;
const chosen = await hostOf(env.HOST ?? 'drizzle');
const redis = new URL(env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const mayDie = env.SURVIVES !== '1';
let app;
let killAfterCommit = false;

class PaymentsProcessor extends WorkerHost {
  async process(job) {
    const { payer, amount, holdMs, fail, kill } = job.data;
    await chosen.pay(app, { caller: payer, amount });
    if (holdMs) await new Promise((resolve) => setTimeout(resolve, holdMs));
    if (fail === 'always' || (fail === 'once' && job.attemptsMade === 0))
      throw new Error(`job ${job.id} fails (attempt ${job.attemptsMade + 1})`);
    if (kill === 'before-commit' && mayDie) process.kill(process.pid, 'SIGKILL');
    if (kill === 'after-commit' && mayDie) killAfterCommit = true;
    return { paid: amount, pid: process.pid };
  }
}
Injectable()(PaymentsProcessor);
Processor(env.QUEUE, {
  concurrency: Number(env.CONCURRENCY ?? 8),
  lockDuration: Number(env.LOCK_MS ?? 2000),
  stalledInterval: Number(env.STALLED_MS ?? 1000),
})(PaymentsProcessor);
decorate(
  PaymentsProcessor,
  'process',
  [IdempotentJob(env.KEY === 'data' ? { key: (job) => job.data.order ?? job.id } : {})],
  [],
);

class AppModule {}
Module({
  imports: [
    ...chosen.imports,
    BullModule.forRoot({ connection: { host: redis.hostname, port: Number(redis.port || 6379) } }),
    BullModule.registerQueue({ name: env.QUEUE }),
  ],
  providers: [PaymentsProcessor],
})(AppModule);

app = await NestFactory.create(AppModule, { logger: ['error'] });
app.get(IdempotencyEvents).subscribe((event) => {
  // The outcome is committed; BullMQ has not completed the job yet.
  if (event.type === 'executed' && event.handler === env.QUEUE && killAfterCommit) process.kill(process.pid, 'SIGKILL');
});
app.enableShutdownHooks();
await app.listen(0, '127.0.0.1');
console.log(`listening on http://127.0.0.1:${app.getHttpServer().address().port}`);
