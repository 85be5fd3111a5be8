import { Module, type OnApplicationShutdown } from '@nestjs/common';
import { ClsPluginTransactional } from '@nestjs-cls/transactional';
import { ClsModule } from 'nestjs-cls';
import { IdempotencyModule } from 'nestjs-pg-idempotency';
import { IdempotentTransactionalAdapterPrisma } from 'nestjs-pg-idempotency/cls';
import { IdempotentPrisma, IdempotentPrismaModule } from 'nestjs-pg-idempotency/prisma';
import { pool } from './database/pool.js';
import { PrismaClient } from './generated/prisma/client.js';
import { PaymentsModule } from './payments/payments.module.js';

@Module({
  imports: [
    IdempotencyModule.forRoot({ pool, ttl: '24h' }),
    IdempotentPrismaModule.forRoot((adapter) => new PrismaClient({ adapter })),
    ClsModule.forRoot({
      global: true,
      middleware: { mount: true },
      plugins: [
        new ClsPluginTransactional({
          // In place of TransactionalAdapterPrisma: on IdempotentPrisma, not on a PrismaClient of its own.
          adapter: new IdempotentTransactionalAdapterPrisma({ prismaInjectionToken: IdempotentPrisma }),
        }),
      ],
    }),
    PaymentsModule,
  ],
})
export class AppModule implements OnApplicationShutdown {
  // The pool is the app's: it ends after the module drained the keys in flight.
  onApplicationShutdown() {
    return pool.end();
  }
}
