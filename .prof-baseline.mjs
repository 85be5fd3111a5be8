// The baseline: the demo's Nest setup (same TypeORM options and pool, ValidationPipe, problem
// filter, bearer guard, DTO and entity) and the same POST /payments handler body (validate,
// insert the payment, read it back, return it), wrapped in a plain dataSource.transaction(),
// with no idempotency. Decorators are applied by hand, as TypeScript would compile them.
import { Body, Controller, Inject, Module, Post, Req, UseGuards, ValidationPipe } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource } from 'typeorm';
const serverEnv = () => ({ databaseUrl: process.env.DATABASE_URL, latencyMs: 0 });
import { CreateIdempotencyKeys1795996800000 } from '/work/main/dist/esm/index.js';
import { BearerAuthGuard } from '/work/main/dist/esm/demo/http/bearer-auth.guard.js';
import { ProblemDetailsFilter } from '/work/main/dist/esm/demo/http/problem-details.filter.js';
import { CreatePaymentDto } from '/work/main/dist/esm/demo/payments/create-payment.dto.js';
import { CreatePayments1795996800001 } from '/work/main/dist/esm/demo/payments/create-payments.migration.js';
import { Payment } from '/work/main/dist/esm/demo/payments/payment.entity.js';

const { databaseUrl, latencyMs } = serverEnv();

class BaselinePaymentsController {
  constructor(dataSource) {
    this.dataSource = dataSource;
  }

  create(dto, request) {
    return this.dataSource.transaction(async (manager) => {
      const payments = manager.getRepository(Payment);
      const saved = await payments.save(payments.create({ ...dto, caller: request.user.id }));
      if (latencyMs > 0) await sleep(latencyMs);
      return payments.findOneByOrFail({ id: saved.id });
    });
  }
}
const prototype = BaselinePaymentsController.prototype;
Inject(DataSource)(BaselinePaymentsController, undefined, 0);
Body()(prototype, 'create', 0);
Req()(prototype, 'create', 1);
Reflect.defineMetadata('design:paramtypes', [CreatePaymentDto, Object], prototype, 'create');
Reflect.decorate([Post()], prototype, 'create', Object.getOwnPropertyDescriptor(prototype, 'create'));
Reflect.decorate([Controller('payments'), UseGuards(BearerAuthGuard)], BaselinePaymentsController);

class BaselineModule {}
Reflect.decorate(
  [
    Module({
      imports: [
        TypeOrmModule.forRoot({
          type: 'postgres',
          url: databaseUrl,
          entities: [Payment],
          migrations: [CreateIdempotencyKeys1795996800000, CreatePayments1795996800001],
          migrationsRun: true,
          extra: { max: 20 },
        }),
      ],
      controllers: [BaselinePaymentsController],
    }),
  ],
  BaselineModule,
);

const app = await NestFactory.create(BaselineModule, { logger: ['error'] });
app.useGlobalPipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true }));
app.useGlobalFilters(new ProblemDetailsFilter());
await app.listen(Number(process.env.PORT), '127.0.0.1'); console.log('ready');
