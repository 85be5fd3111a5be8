import { Module } from '@nestjs/common';
import { IdempotencyModule } from 'nestjs-pg-idempotency';
import { DatabaseModule, pool } from './database/database.module.js';
import { PaymentsModule } from './payments/payments.module.js';

@Module({
  imports: [DatabaseModule, IdempotencyModule.forRoot({ pool, ttl: '24h' }), PaymentsModule],
})
export class AppModule {}
