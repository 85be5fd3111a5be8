import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CreatePartitionedIdempotencyKeys1795996800000, IdempotencyModule } from 'nestjs-pg-idempotency';
import { CreatePayments1796601600000 } from './payments/create-payments.migration.js';
import { PaymentsModule } from './payments/payments.module.js';

@Module({
  imports: [
    // #region partitioned
    TypeOrmModule.forRoot({
      type: 'postgres',
      url: process.env.DATABASE_URL,
      autoLoadEntities: true,
      // The partitioned key table instead of the plain one, beside the app's own migrations.
      migrations: [CreatePartitionedIdempotencyKeys1795996800000, CreatePayments1796601600000],
      migrationsRun: true,
    }),
    // #endregion partitioned
    // #region storage
    IdempotencyModule.forRoot({
      ttl: '24h',
      partitionInterval: '6h', // the default: a quarter of ttl
      storage: {
        keys: 'digest',
        encryption: {
          keys: [
            { id: '2026-12', key: process.env.IDEMPOTENCY_KEY_2026_12! }, // seals new rows
            { id: '2026-06', key: process.env.IDEMPOTENCY_KEY_2026_06! }, // still opens older rows
          ],
        },
      },
    }),
    // #endregion storage
    PaymentsModule,
  ],
})
export class AppModule {}
