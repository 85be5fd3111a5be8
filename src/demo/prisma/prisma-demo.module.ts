import { type DynamicModule, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import pg from 'pg';
import { ClsPluginTransactional } from '@nestjs-cls/transactional';
import { ClsModule } from 'nestjs-cls';
import { IdempotentTransactionalAdapterPrisma } from '../../tools/cls/index.js';
import { IdempotentPrisma, IdempotentPrismaModule } from '../../tools/prisma/index.js';
import { IdempotencyModule } from '../../idempotency.module.js';
import { CreateIdempotencyKeys1795996800000 } from '../../store/migrations/create-idempotency-keys.migration.js';
import { DEMO_CONFIG, type DemoConfig } from '../demo.config.js';
import { DEMO_TABLES, migrateWithout } from '../demo-tables.js';
import { PrismaClient } from './generated/client.js';
import { PrismaPaymentsController } from './prisma-payments.controller.js';
import { PrismaRefundsController } from './prisma-refunds.controller.js';
import { TransactionalPrismaPayments, TransactionalPrismaPaymentsController } from './transactional-prisma-payments.js';

const DEMO_POOL = Symbol('DEMO_POOL');

/** The demo's node-postgres pool, its tables created on it first (no TypeORM on this host); ended at shutdown. */
@Module({})
class DemoPoolModule implements OnApplicationShutdown {
  constructor(@Inject(DEMO_POOL) private readonly pool: pg.Pool) {}

  async onApplicationShutdown(): Promise<void> {
    await this.pool.end();
  }

  static forRoot(config: DemoConfig & { databaseUrl: string }): DynamicModule {
    return {
      module: DemoPoolModule,
      providers: [
        {
          provide: DEMO_POOL,
          useFactory: async () => {
            const pool = new pg.Pool({
              connectionString: config.databaseUrl,
              max: config.poolSize,
              connectionTimeoutMillis: config.poolTimeoutMs,
            });
            await migrateWithout(pool, [CreateIdempotencyKeys1795996800000, ...DEMO_TABLES]);
            return pool;
          },
        },
      ],
      exports: [DEMO_POOL],
    };
  }
}

/**
 * The demo payments API on Prisma 7 over a node-postgres pool: the same routes, the payment
 * written through `IdempotentPrisma` (`DEMO_TX=prisma`) or by a `@Transactional()` service through
 * `@nestjs-cls/transactional` (`DEMO_TX=cls-prisma`).
 */
export function prismaDemoModule(config: DemoConfig & { databaseUrl: string }): DynamicModule {
  const pools = DemoPoolModule.forRoot(config);
  const cls = config.tx === 'cls-prisma';
  return {
    module: class PrismaDemoModule {},
    imports: [
      pools,
      IdempotentPrismaModule.forRoot((adapter) => new PrismaClient({ adapter })),
      ...(cls
        ? [
            ClsModule.forRoot({
              global: true,
              middleware: { mount: true },
              plugins: [
                new ClsPluginTransactional({
                  adapter: new IdempotentTransactionalAdapterPrisma({ prismaInjectionToken: IdempotentPrisma }),
                }),
              ],
            }),
          ]
        : []),
      IdempotencyModule.forRootAsync({
        imports: [pools],
        inject: [DEMO_POOL],
        useFactory: (pool: pg.Pool) => ({
          pool,
          ttl: config.ttlSeconds * 1000,
          sweepInterval: config.sweepIntervalMs,
          lease: config.leaseSeconds * 1000,
          renewLease: config.leaseRenewal,
          storage: config.storage,
          drainTimeout: config.drainTimeoutMs,
          ...(config.replayCache === false && { replayCache: false }),
        }),
      }),
    ],
    controllers: [cls ? TransactionalPrismaPaymentsController : PrismaPaymentsController, PrismaRefundsController],
    providers: [{ provide: DEMO_CONFIG, useValue: config }, ...(cls ? [TransactionalPrismaPayments] : [])],
  };
}
