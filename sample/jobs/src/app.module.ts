// #region module
import { BullModule } from '@nestjs/bullmq';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IdempotencyModule } from 'nestjs-pg-idempotency';
import { PaymentsModule } from './payments/payments.module.js';

@Module({
  imports: [
    // Tables: `npm run migrate` (idempotency_keys and db/tables.sql).
    TypeOrmModule.forRoot({ type: 'postgres', url: process.env.DATABASE_URL, autoLoadEntities: true }),
    IdempotencyModule.forRoot({ ttl: '24h' }),
    BullModule.forRoot({ connection: { url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' } }),
    PaymentsModule,
  ],
})
export class AppModule {}
// #endregion module
