import { Module, type OnApplicationShutdown } from '@nestjs/common';
import { IdempotencyModule } from 'nestjs-pg-idempotency';
import { IdempotentPrismaModule } from 'nestjs-pg-idempotency/prisma';
import { pool } from './database/pool.js';
import { PrismaClient } from './generated/prisma/client.js';
import { PaymentsModule } from './payments/payments.module.js';

@Module({
  imports: [
    IdempotencyModule.forRoot({ pool, ttl: '24h' }),
    // Your client options go beside `adapter`, the PrismaPg the module builds on the pool.
    IdempotentPrismaModule.forRoot((adapter) => new PrismaClient({ adapter })),
    PaymentsModule,
  ],
})
export class AppModule implements OnApplicationShutdown {
  // The pool is the app's: it ends after the module drained the keys in flight.
  onApplicationShutdown() {
    return pool.end();
  }
}
