// The execute path on Prisma 7 over a node-postgres pool (no TypeORM), beside its own baseline:
// the demo's Nest setup (ValidationPipe, problem filter, bearer guard, DTO) and the demo handler's
// body (insert the payment, read it back, return it) with Prisma on PrismaPg over a pool of 20.
// - PRISMA_SERVER=baseline: in a plain interactive `$transaction()`, with no idempotency;
// - PRISMA_SERVER=module: `@Idempotent()`, the module on the pool (`pool`), the writes through
//   IdempotentPrisma's client (the key's transaction is the transaction).
// Decorators are applied by hand, as TypeScript would compile them.
import { Body, Controller, Module, Post, Req, UseGuards, ValidationPipe } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { serve, serverEnv } from './common.mjs';
import { Idempotent, IdempotencyModule } from '../../dist/esm//index.js';
import { IdempotentPrisma, IdempotentPrismaModule } from '../../dist/esm/tools/prisma/index.js';
import { PrismaClient } from '../../dist/esm/demo/prisma/generated/client.js';
import { BearerAuthGuard } from '../../dist/esm/demo/http/bearer-auth.guard.js';
import { ProblemDetailsFilter } from '../../dist/esm/demo/http/problem-details.filter.js';
import { CreatePaymentDto } from '../../dist/esm/demo/payments/create-payment.dto.js';

const { databaseUrl } = serverEnv();
const mode = process.env.PRISMA_SERVER ?? 'module';
if (mode !== 'baseline' && mode !== 'module')
  throw new Error(`PRISMA_SERVER must be "baseline" or "module", got "${mode}"`);

// Idle connections go after a second: the bench's servers take turns on one PostgreSQL's connections.
const pool = new pg.Pool({ connectionString: databaseUrl, max: 20, idleTimeoutMillis: 1_000 });
const PAYMENT = { id: true, amount: true, currency: true, createdAt: true };

/** The demo handler's body on `client`: insert the payment, read it back. */
async function pay(client, dto, caller) {
  const { id } = await client.payment.create({ data: { ...dto, caller }, select: { id: true } });
  return client.payment.findUniqueOrThrow({ where: { id }, select: PAYMENT });
}

const plain = mode === 'baseline' ? new PrismaClient({ adapter: new PrismaPg(pool) }) : undefined;

class PaymentsController {
  constructor(prisma) {
    this.prisma = prisma;
  }
  create(dto, request) {
    return mode === 'baseline'
      ? plain.$transaction((tx) => pay(tx, dto, request.user.id))
      : pay(this.prisma.client, dto, request.user.id);
  }
}
const prototype = PaymentsController.prototype;
Body()(prototype, 'create', 0);
Req()(prototype, 'create', 1);
Reflect.defineMetadata('design:paramtypes', [CreatePaymentDto, Object], prototype, 'create');
Reflect.defineMetadata('design:paramtypes', mode === 'module' ? [IdempotentPrisma] : [], PaymentsController);
Reflect.decorate(
  mode === 'module' ? [Post(), Idempotent()] : [Post()],
  prototype,
  'create',
  Object.getOwnPropertyDescriptor(prototype, 'create'),
);
Reflect.decorate([Controller('payments'), UseGuards(BearerAuthGuard)], PaymentsController);

class PrismaBenchModule {}
Reflect.decorate(
  [
    Module({
      imports:
        mode === 'module'
          ? [
              IdempotencyModule.forRoot({ pool, sweepInterval: 0 }),
              IdempotentPrismaModule.forRoot((adapter) => new PrismaClient({ adapter })),
            ]
          : [],
      controllers: [PaymentsController],
    }),
  ],
  PrismaBenchModule,
);

const app = await NestFactory.create(PrismaBenchModule, { logger: ['error'] });
app.useGlobalPipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true }));
app.useGlobalFilters(new ProblemDetailsFilter());
await serve(app);
