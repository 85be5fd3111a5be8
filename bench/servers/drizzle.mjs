// The execute path on Drizzle ORM over a node-postgres pool (no TypeORM), beside its own baseline:
// the demo's Nest setup (ValidationPipe, problem filter, bearer guard, DTO) and the demo handler's
// body (insert the payment, read it back, return it) with Drizzle on a pool of 20.
// - DRIZZLE_SERVER=baseline: in a plain `db.transaction()`, with no idempotency;
// - DRIZZLE_SERVER=module: `@Idempotent()`, the module on the pool (`pool`), the writes through
//   IdempotentDrizzle.
// Decorators are applied by hand, as TypeScript would compile them.
import { Body, Controller, Module, Post, Req, UseGuards, ValidationPipe } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { eq } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { serve, serverEnv } from './common.mjs';
import { Idempotent, IdempotencyModule } from '../../dist/esm//index.js';
import { IdempotentDrizzle } from '../../dist/esm/tools/drizzle/index.js';
import { payments } from '../../dist/esm/demo/payments/payments.table.js';
import { BearerAuthGuard } from '../../dist/esm/demo/http/bearer-auth.guard.js';
import { ProblemDetailsFilter } from '../../dist/esm/demo/http/problem-details.filter.js';
import { CreatePaymentDto } from '../../dist/esm/demo/payments/create-payment.dto.js';

const { databaseUrl } = serverEnv();
const mode = process.env.DRIZZLE_SERVER ?? 'module';
if (mode !== 'baseline' && mode !== 'module')
  throw new Error(`DRIZZLE_SERVER must be "baseline" or "module", got "${mode}"`);

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

class PaymentsController {
  create(dto, request) {
    return mode === 'baseline'
      ? db.transaction((tx) => pay(tx, dto, request.user.id))
      : pay(idempotent.db, dto, request.user.id);
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
      imports: mode === 'module' ? [IdempotencyModule.forRoot({ pool, sweepInterval: 0 })] : [],
      controllers: [PaymentsController],
    }),
  ],
  DrizzleModule,
);

const app = await NestFactory.create(DrizzleModule, { logger: ['error'] });
app.useGlobalPipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true }));
app.useGlobalFilters(new ProblemDetailsFilter());
await serve(app);
