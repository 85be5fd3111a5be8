// The demo's Nest setup without the module: the same TypeORM options and pool, ValidationPipe,
// problem filter, bearer guard, DTO and entities (the demo's two: TypeORM's work per query grows
// with the entities it knows), and a POST /payments whose body is `create`.
// Decorators are applied by hand, as TypeScript would compile them. Both bench servers that
// compare against the module build on it: the baseline and the key-statements floor.
import { Body, Controller, Inject, Module, Post, Req, UseGuards, ValidationPipe } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { serve } from './common.mjs';
import { CreateIdempotencyKeys1795996800000 } from '../../dist/esm//index.js';
import { BearerAuthGuard } from '../../dist/esm/demo/http/bearer-auth.guard.js';
import { ProblemDetailsFilter } from '../../dist/esm/demo/http/problem-details.filter.js';
import { CreatePaymentDto } from '../../dist/esm/demo/payments/create-payment.dto.js';
import { Payment } from '../../dist/esm/demo/payments/payment.entity.js';
import { DEMO_TABLES } from '../../dist/esm/demo/demo-tables.js';
import { Refund } from '../../dist/esm/demo/refunds/refund.entity.js';

/**
 * Serves the app; `create(dataSource, dto, request)` answers POST /payments with a payment;
 * `configure(app)`, when given, runs before it listens; `imports` are added to the app's module,
 * and `decorators` to the handler (the lean module server's `IdempotencyModule` and `@Idempotent()`).
 */
export async function servePlainApp(databaseUrl, create, { configure, imports = [], decorators = [] } = {}) {
  class PlainPaymentsController {
    constructor(dataSource) {
      this.dataSource = dataSource;
    }

    create(dto, request) {
      return create(this.dataSource, dto, request);
    }
  }
  const prototype = PlainPaymentsController.prototype;
  Inject(DataSource)(PlainPaymentsController, undefined, 0);
  Body()(prototype, 'create', 0);
  Req()(prototype, 'create', 1);
  Reflect.defineMetadata('design:paramtypes', [CreatePaymentDto, Object], prototype, 'create');
  Reflect.decorate([Post(), ...decorators], prototype, 'create', Object.getOwnPropertyDescriptor(prototype, 'create'));
  Reflect.decorate([Controller('payments'), UseGuards(BearerAuthGuard)], PlainPaymentsController);

  class PlainModule {}
  Reflect.decorate(
    [
      Module({
        imports: [
          TypeOrmModule.forRoot({
            type: 'postgres',
            url: databaseUrl,
            entities: [Payment, Refund],
            migrations: [CreateIdempotencyKeys1795996800000, ...DEMO_TABLES],
            migrationsRun: true,
            extra: { max: 20 },
          }),
          ...imports,
        ],
        controllers: [PlainPaymentsController],
      }),
    ],
    PlainModule,
  );

  const app = await NestFactory.create(PlainModule, { logger: ['error'] });
  app.useGlobalPipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true }));
  app.useGlobalFilters(new ProblemDetailsFilter());
  configure?.(app);
  await serve(app);
}

export { Payment };
