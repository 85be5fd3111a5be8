// #region module
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IdempotencyModule } from 'nestjs-pg-idempotency';
import { LedgerModule } from './ledger/ledger.module.js';
import { MetricsController } from './metrics.controller.js';

@Module({
  imports: [
    // The tables: `npm run migrate` (the module's key table, then db/ledger.sql).
    TypeOrmModule.forRoot({ type: 'postgres', url: process.env.DATABASE_URL, autoLoadEntities: true }),
    IdempotencyModule.forRoot(),
    LedgerModule,
  ],
  controllers: [MetricsController],
})
export class AppModule {}
// #endregion module
