// A message consumer on Nest's RMQ transport (noAck: false, prefetch 16) over a node-postgres pool
// of 10, each message one row (bench_messages: its batch, when it was published, when written):
// - CONSUMER=plain: the handler writes in a plain `db.transaction()` and acks after its commit;
// - CONSUMER=module: the same write under `@IdempotentMessage()` (the module acks after the commit),
//   through IdempotentDrizzle;
// - CONSUMER=ceiling: the plain handler in a transaction that also sends the key's statements the
//   way transactional mode sends them for a fresh key (its lock and row lookup with START
//   TRANSACTION, its row with COMMIT: the plain consumer's round trips), through the library's own
//   node-postgres host, with no interceptor and no module code around the handler: the ceiling of
//   this design. Between it and the module lies the module's own work in the consumer; between it
//   and the plain consumer, what the key's statements cost.
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
if (!['plain', 'module', 'ceiling'].includes(mode))
  throw new Error(`CONSUMER must be "plain", "module" or "ceiling", got "${mode}"`);
const pool = new pg.Pool({ connectionString: databaseUrl, max: 10, idleTimeoutMillis: 1_000 });
const db = drizzle({ client: pool });
const idempotent = new IdempotentDrizzle(db);
const insert = (message) =>
  sql`INSERT INTO bench_messages (batch, published_at) VALUES (${message.batch}, to_timestamp(${message.publishedAt}::double precision / 1000))`;
const ceiling = mode === 'ceiling' ? await keyStatements() : undefined;

/** The ceiling's handler: the plain write in a key transaction of the library's host, its key's statements around it. */
async function keyStatements() {
  const dist = (path) => new URL(`dist/esm/${path}`, root).href;
  const { PgPoolHost } = await import(dist('hosts/pg/pool-host.js'));
  const { resolveModuleOptions } = await import(dist('options/settings.js'));
  const { scopeKey } = await import(dist('key/scoped-key.js'));
  const { executionContext } = await import(dist('hosts/execution-context.js'));
  const { RECORD_OUTCOME } = await import(dist('store/table/record.sql.js'));
  const { KEY_ROW, LOCK_KEY } = await import(dist('store/table/reservation.sql.js'));
  const host = new PgPoolHost(resolveModuleOptions({ pool }));
  const fingerprint = Buffer.alloc(32, 7);
  const headers = JSON.stringify([['content-type', 'application/json']]);
  const body = Buffer.from('null');
  // One Drizzle per pooled connection's key client, as a handler's tool built over it.
  const tools = new WeakMap();
  return async (message, messageId) => {
    const scope = scopeKey(messageId, '', 'MESSAGE bench.message');
    const row = [scope.key, scope.caller, scope.endpoint, fingerprint];
    const { transaction, results } = await host.begin(
      [
        [LOCK_KEY, [scope.lockId]],
        [KEY_ROW, row],
      ],
      [RECORD_OUTCOME],
    );
    try {
      if (results[0].rows[0].locked !== true || results[1].rows.length > 0)
        throw new Error('a fresh key was found taken');
      const client = transaction.handle;
      if (!tools.has(client)) tools.set(client, drizzle({ client }));
      // Drizzle runs a query when awaited: inside the context.
      await executionContext.run(
        { scope, handle: client },
        async () => await tools.get(client).execute(insert(message)),
      );
      await transaction.commitWith([[RECORD_OUTCOME, [...row, 200, headers, body, 86_400_000, null]]], false);
    } catch (error) {
      await transaction.end('rollback').catch(() => undefined);
      throw error;
    }
  };
}

class ConsumerController {
  async created(message, context) {
    // Neither returns the driver's result: the module would record it (a kilobyte of pg's own fields).
    if (mode === 'module') {
      await idempotent.db.execute(insert(message));
      return;
    }
    if (ceiling) {
      await ceiling(message, context.getMessage().properties.messageId);
      context.getChannelRef().ack(context.getMessage());
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
