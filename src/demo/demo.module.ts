import { type DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IdempotencyModule } from '../idempotency.module.js';
import { CreateIdempotencyKeys1795996800000 } from '../store/migrations/create-idempotency-keys.migration.js';
import { DEMO_CONFIG, type DemoConfig } from './demo.config.js';
import { DEMO_TABLES } from './demo-tables.js';
import { Payment } from './payments/payment.entity.js';
import { PaymentsController } from './payments/payments.controller.js';
import { prismaDemoModule } from './prisma/prisma-demo.module.js';
import { Refund } from './refunds/refund.entity.js';
import { RefundsController } from './refunds/refunds.controller.js';
import { SimulatedPaymentProvider } from './refunds/simulated-payment-provider.js';
import { PaymentLedger } from './transactional/payment-ledger.service.js';
import { PaymentsService } from './transactional/payments.service.js';
import { TransactionalPaymentsController } from './transactional/transactional-payments.controller.js';
import { TransactionalClsModule } from './transactional/transactional.module.js';

/** The demo payments API, wired the way an application uses the module. */
@Module({})
export class DemoModule {
  static forRoot(config: DemoConfig & { databaseUrl: string }): DynamicModule {
    if (config.tx === 'prisma' || config.tx === 'cls-prisma')
      return { module: DemoModule, imports: [prismaDemoModule(config)] };
    const cls = config.tx === 'cls';
    return {
      module: DemoModule,
      imports: [
        ...(cls ? [TransactionalClsModule] : []),
        TypeOrmModule.forRoot({
          type: 'postgres',
          url: config.databaseUrl,
          entities: [Payment, Refund],
          migrations: [CreateIdempotencyKeys1795996800000, ...DEMO_TABLES],
          migrationsRun: true,
          extra: { max: config.poolSize, connectionTimeoutMillis: config.poolTimeoutMs },
        }),
        IdempotencyModule.forRoot({
          ttl: config.ttlSeconds * 1000,
          sweepInterval: config.sweepIntervalMs,
          lease: config.leaseSeconds * 1000,
          renewLease: config.leaseRenewal,
          typeormAccess: config.typeormAccess,
          storage: config.storage,
          drainTimeout: config.drainTimeoutMs,
          ...(config.replayCache === false && { replayCache: false }),
        }),
      ],
      controllers: [cls ? TransactionalPaymentsController : PaymentsController, RefundsController],
      providers: [
        { provide: DEMO_CONFIG, useValue: config },
        SimulatedPaymentProvider,
        ...(cls ? [PaymentsService, PaymentLedger] : []),
      ],
    };
  }
}
