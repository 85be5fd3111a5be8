// The execute path on Drizzle ORM over a node-postgres pool (no TypeORM), beside its own baseline:
// the demo's Nest setup (ValidationPipe, problem filter, bearer guard, DTO) and the demo handler's
// body (insert the payment, read it back, return it) with Drizzle on a pool of 20.
// - DRIZZLE_SERVER=baseline: in a plain `db.transaction()`, with no idempotency;
// - DRIZZLE_SERVER=module: `@Idempotent()`, the module on the pool (`pool`), the writes through
//   IdempotentDrizzle.
// - DRIZZLE_OUTBOX (module only): the module's outbox on, publishing to RabbitMQ (RABBITMQ_URL)
//   through its relay; `stage`: the handler also stages one message (the payment) to the queue
//   OUTBOX_QUEUE (declared here, kept at most 10,000 messages long); `write`: it only writes. The
//   `outboxLag` command answers the p50 and p99 of the relayed messages' time from their commit to
//   the broker's confirm, since the last `reset` (the measured window).
// Decorators are applied by hand, as TypeScript would compile them.
import { Body, Controller, Module, Post, Req, UseGuards, ValidationPipe } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { eq } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { serve, serverEnv } from './common.mjs';
import {
  Idempotent,
  IdempotencyEvents,
  IdempotencyModule,
  IdempotencyOutbox,
  rabbitMqPublisher,
} from '../../dist/esm//index.js';
import { IdempotentDrizzle } from '../../dist/esm/tools/drizzle/index.js';
import { payments } from '../../dist/esm/demo/payments/payments.table.js';
import { BearerAuthGuard } from '../../dist/esm/demo/http/bearer-auth.guard.js';
import { ProblemDetailsFilter } from '../../dist/esm/demo/http/problem-details.filter.js';
import { CreatePaymentDto } from '../../dist/esm/demo/payments/create-payment.dto.js';

const { databaseUrl } = serverEnv();
const mode = process.env.DRIZZLE_SERVER ?? 'module';
if (mode !== 'baseline' && mode !== 'module')
  throw new Error(`DRIZZLE_SERVER must be "baseline" or "module", got "${mode}"`);

const outboxMode = mode === 'module' ? process.env.DRIZZLE_OUTBOX : undefined;
if (outboxMode !== undefined && outboxMode !== 'write' && outboxMode !== 'stage')
  throw new Error(`DRIZZLE_OUTBOX must be "write" or "stage", got "${outboxMode}"`);
let outbox;
if (outboxMode) {
  const { default: amqplib } = await import('amqplib');
  const connection = await amqplib.connect(process.env.RABBITMQ_URL ?? 'amqp://guest:guest@127.0.0.1:5672');
  const channel = await connection.createConfirmChannel();
  await channel.assertQueue(process.env.OUTBOX_QUEUE, {
    durable: true,
    arguments: { 'x-max-length': 10_000, 'x-overflow': 'drop-head' },
  });
  outbox = { publishers: { rmq: rabbitMqPublisher(channel) } };
}

const schema = { payments };
// Idle connections go after a second: the bench's servers take turns on one PostgreSQL's connections.
const pool = new pg.Pool({ connectionString: databaseUrl, max: 20, idleTimeoutMillis: 1_000 });
const db = drizzle({ client: pool, schema });
const idempotent = new IdempotentDrizzle(db, { schema });

/** The demo handler's body on `database`: insert the payment, read it back. */
async function pay(database, dto, caller) {
  const [{ id }] = await database
    .insert(payments)
    .values({ ...dto, caller })
    .returning({ id: payments.id });
  const [payment] = await database
    .select({ id: payments.id, amount: payments.amount, currency: payments.currency, createdAt: payments.createdAt })
    .from(payments)
    .where(eq(payments.id, id));
  return payment;
}

let app;
class PaymentsController {
  async create(dto, request) {
    if (mode === 'baseline') return db.transaction((tx) => pay(tx, dto, request.user.id));
    const payment = await pay(idempotent.db, dto, request.user.id);
    if (outboxMode === 'stage')
      app.get(IdempotencyOutbox).stage({ destination: process.env.OUTBOX_QUEUE, payload: payment });
    return payment;
  }
}
const prototype = PaymentsController.prototype;
Body()(prototype, 'create', 0);
Req()(prototype, 'create', 1);
Reflect.defineMetadata('design:paramtypes', [CreatePaymentDto, Object], prototype, 'create');
Reflect.decorate(
  mode === 'module' ? [Post(), Idempotent()] : [Post()],
  prototype,
  'create',
  Object.getOwnPropertyDescriptor(prototype, 'create'),
);
Reflect.decorate([Controller('payments'), UseGuards(BearerAuthGuard)], PaymentsController);

class DrizzleModule {}
Reflect.decorate(
  [
    Module({
      imports: mode === 'module' ? [IdempotencyModule.forRoot({ pool, sweepInterval: 0, outbox })] : [],
      controllers: [PaymentsController],
    }),
  ],
  DrizzleModule,
);

app = await NestFactory.create(DrizzleModule, { logger: ['error'] });
app.useGlobalPipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true }));
app.useGlobalFilters(new ProblemDetailsFilter());
let lags = [];
if (outboxMode)
  app.get(IdempotencyEvents).subscribe((event) => {
    if (event.type === 'outbox-relayed' && event.outcome === 'sent') lags.push(event.lagMs);
  });
await serve(
  app,
  {
    /** The p50 and p99 of the relayed messages' commit-to-confirm times since the last reset, and how many. */
    outboxLag() {
      const sorted = [...lags].sort((a, b) => a - b);
      const at = (q) => sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * q) - 1)];
      return { count: sorted.length, p50: at(0.5), p99: at(0.99) };
    },
  },
  { onReset: () => (lags = []) },
);
