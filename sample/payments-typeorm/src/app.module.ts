import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CreateIdempotencyKeys1795996800000, IdempotencyModule } from 'nestjs-pg-idempotency';
import { HealthModule } from './health/health.module.js';
import { CreatePayments1796601600000 } from './payments/create-payments.migration.js';
import { PaymentsModule } from './payments/payments.module.js';

// #region module
@Module({
  imports: [
    TypeOrmModule.forRoot({
      type: 'postgres',
      url: process.env.DATABASE_URL,
      autoLoadEntities: true,
      // The key table's migration beside the app's own, run at startup.
      migrations: [CreateIdempotencyKeys1795996800000, CreatePayments1796601600000],
      migrationsRun: true,
    }),
    IdempotencyModule.forRoot({ ttl: '24h' }),
    PaymentsModule,
    HealthModule,
  ],
})
export class AppModule {}
// #endregion module
