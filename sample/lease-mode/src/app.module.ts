import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IdempotencyModule } from 'nestjs-pg-idempotency';
import { RefundsModule } from './refunds/refunds.module.js';

@Module({
  imports: [
    // Tables: `npm run migrate` (idempotency_keys and db/tables.sql).
    TypeOrmModule.forRoot({ type: 'postgres', url: process.env.DATABASE_URL, autoLoadEntities: true }),
    IdempotencyModule.forRoot({ ttl: '24h' }),
    RefundsModule,
  ],
})
export class AppModule {}
