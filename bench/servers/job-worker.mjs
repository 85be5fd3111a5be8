// A BullMQ worker (@nestjs/bullmq, concurrency 16) over a node-postgres pool of 10, each job one
// row (bench_jobs: its batch, when it was written):
// - JOBS=plain: the processor writes in a plain `db.transaction()`; BullMQ completes the job after;
// - JOBS=module: the same write under `@IdempotentJob()` (keyed on the job's id), through
//   IdempotentDrizzle.
// The queue is QUEUE on REDIS_URL. Decorators are applied by hand, as TypeScript would compile them.
import { BullModule, Processor, WorkerHost } from '@nestjs/bullmq';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { IdempotencyModule, IdempotentJob } from '../../dist/esm/index.js';
import { IdempotentDrizzle } from '../../dist/esm/tools/drizzle/index.js';
import { serve, serverEnv } from './common.mjs';

const { databaseUrl } = serverEnv();
const mode = process.env.JOBS ?? 'module';
if (mode !== 'plain' && mode !== 'module') throw new Error(`JOBS must be "plain" or "module", got "${mode}"`);
const redis = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const pool = new pg.Pool({ connectionString: databaseUrl, max: 10, idleTimeoutMillis: 1_000 });
const db = drizzle({ client: pool });
const idempotent = new IdempotentDrizzle(db);
const insert = (job) => sql`INSERT INTO bench_jobs (batch) VALUES (${job.data.batch})`;

class JobsProcessor extends WorkerHost {
  async process(job) {
    if (mode === 'module') return idempotent.db.execute(insert(job)).then(() => ({ ok: true }));
    await db.transaction((tx) => tx.execute(insert(job)));
    return { ok: true };
  }
}
Reflect.decorate([Injectable(), Processor(process.env.QUEUE, { concurrency: 16 })], JobsProcessor);
if (mode === 'module') {
  const prototype = JobsProcessor.prototype;
  Reflect.defineMetadata('design:paramtypes', [Object], prototype, 'process');
  const descriptor = Object.getOwnPropertyDescriptor(prototype, 'process');
  Object.defineProperty(prototype, 'process', Reflect.decorate([IdempotentJob()], prototype, 'process', descriptor));
}

class WorkerModule {}
Reflect.decorate(
  [
    Module({
      imports: [
        ...(mode === 'module' ? [IdempotencyModule.forRoot({ pool, sweepInterval: 0 })] : []),
        BullModule.forRoot({ connection: { host: redis.hostname, port: Number(redis.port || 6379) } }),
        BullModule.registerQueue({ name: process.env.QUEUE }),
      ],
      providers: [JobsProcessor],
    }),
  ],
  WorkerModule,
);

const app = await NestFactory.create(WorkerModule, { logger: ['error'] });
await serve(app);
