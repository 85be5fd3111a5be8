import { Module } from '@nestjs/common';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import { ClsPluginTransactional } from '@nestjs-cls/transactional';
import { ClsModule } from 'nestjs-cls';
import { CreateIdempotencyKeys1795996800000, IdempotencyModule } from 'nestjs-pg-idempotency';
import { IdempotentTransactionalAdapterTypeOrm } from 'nestjs-pg-idempotency/cls';
import { CreatePayments1796601600000 } from './payments/create-payments.migration.js';
import { Payment } from './payments/payment.entity.js';
import { PaymentsModule } from './payments/payments.module.js';

@Module({
  imports: [
    TypeOrmModule.forRoot({
      type: 'postgres',
      url: process.env.DATABASE_URL,
      entities: [Payment],
      // The key table's migration beside the app's own, run at startup.
      migrations: [CreateIdempotencyKeys1795996800000, CreatePayments1796601600000],
      migrationsRun: true,
    }),
    ClsModule.forRoot({
      global: true,
      middleware: { mount: true },
      plugins: [
        new ClsPluginTransactional({
          // In place of TransactionalAdapterTypeOrm, with the same options.
          adapter: new IdempotentTransactionalAdapterTypeOrm({ dataSourceToken: getDataSourceToken() }),
        }),
      ],
    }),
    IdempotencyModule.forRoot({ ttl: '24h' }),
    PaymentsModule,
  ],
})
export class AppModule {}
