// #region module
import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IdempotencyModule } from 'nestjs-pg-idempotency';
import { PayoutsModule } from './payouts/payouts.module.js';
import { ReportsModule } from './reports/reports.module.js';

@Module({
  imports: [
    // Tables: `npm run migrate` (idempotency_keys and db/tables.sql).
    TypeOrmModule.forRoot({ type: 'postgres', url: process.env.DATABASE_URL }),
    IdempotencyModule.forRoot({ ttl: '24h' }), // exports IdempotencyService, global
    ScheduleModule.forRoot(), // runs the @Cron() methods
    PayoutsModule,
    ReportsModule,
  ],
})
export class AppModule {}
// #endregion module
