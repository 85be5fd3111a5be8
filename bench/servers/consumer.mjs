// A message consumer on Nest's RMQ transport (noAck: false, prefetch 16) over a node-postgres pool
// of 10, each message one row (bench_messages: its batch, when it was published, when written):
// - CONSUMER=plain: the handler writes in a plain `db.transaction()` and acks after its commit;
// - CONSUMER=module: the same write under `@IdempotentMessage()` (the module acks after the commit),
//   through IdempotentDrizzle.
// The queue is QUEUE; MODULE_DIST: another build's dist/ folder (the previous build of
// BENCH_PREVIOUS_DIST). Decorators are applied by hand, as TypeScript would compile them.
import { Controller, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Ctx, EventPattern, Payload, Transport } from '@nestjs/microservices';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { serve, serverEnv } from './common.mjs';

// The package's entries as its package.json exports them (a previous build's layout may differ).
const root = process.env.MODULE_DIST
  ? pathToFileURL(`${process.env.MODULE_DIST.replace(/\/$/, '')}/../`)
  : new URL('../../', import.meta.url);
const { exports } = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));
const entry = (subpath) => new URL(exports[subpath].import.default, root).href;
const { IdempotencyModule, IdempotentMessage } = await import(entry('.'));
const { IdempotentDrizzle } = await import(entry('./drizzle'));

const { databaseUrl } = serverEnv();
const mode = process.env.CONSUMER ?? 'module';
if (mode !== 'plain' && mode !== 'module') throw new Error(`CONSUMER must be "plain" or "module", got "${mode}"`);
const pool = new pg.Pool({ connectionString: databaseUrl, max: 10, idleTimeoutMillis: 1_000 });
const db = drizzle({ client: pool });
const idempotent = new IdempotentDrizzle(db);
const insert = (message) =>
  sql`INSERT INTO bench_messages (batch, published_at) VALUES (${message.batch}, to_timestamp(${message.publishedAt}::double precision / 1000))`;

class ConsumerController {
  async created(message, context) {
    // Neither returns the driver's result: the module would record it (a kilobyte of pg's own fields).
    if (mode === 'module') {
      await idempotent.db.execute(insert(message));
      return;
    }
    await db.transaction((tx) => tx.execute(insert(message)));
    context.getChannelRef().ack(context.getMessage());
  }
}
const prototype = ConsumerController.prototype;
Payload()(prototype, 'created', 0);
Ctx()(prototype, 'created', 1);
Reflect.defineMetadata('design:paramtypes', [Object, Object], prototype, 'created');
Reflect.decorate(
  mode === 'module' ? [EventPattern('bench.message'), IdempotentMessage()] : [EventPattern('bench.message')],
  prototype,
  'created',
  Object.getOwnPropertyDescriptor(prototype, 'created'),
);
Reflect.decorate([Controller()], ConsumerController);

class ConsumerModule {}
Reflect.decorate(
  [
    Module({
      imports: mode === 'module' ? [IdempotencyModule.forRoot({ pool, sweepInterval: 0 })] : [],
      controllers: [ConsumerController],
    }),
  ],
  ConsumerModule,
);

const app = await NestFactory.create(ConsumerModule, { logger: ['error'] });
app.connectMicroservice({
  transport: Transport.RMQ,
  options: {
    urls: [process.env.RABBITMQ_URL ?? 'amqp://guest:guest@127.0.0.1:5672'],
    queue: process.env.QUEUE,
    noAck: false,
    prefetchCount: 16,
    queueOptions: { durable: true },
  },
});
await app.startAllMicroservices();
await serve(app);
