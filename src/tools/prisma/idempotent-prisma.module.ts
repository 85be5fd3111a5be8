import { type DynamicModule, Module } from '@nestjs/common';
import type { PrismaClientLike } from './self-check.js';
import {
  IdempotentPrisma,
  idempotentPrisma,
  type IdempotentPrismaOptions,
  type PrismaClientFactory,
} from './idempotent-prisma.js';

/**
 * `IdempotentPrisma` for the whole app: `IdempotentPrismaModule.forRoot((adapter) => new PrismaClient({ adapter }))`
 * provides it (global, as `IdempotencyModule` is), so that services and a transaction tool's
 * plugin (`IdempotentTransactionalAdapterPrisma`) reach it from any module.
 */
@Module({})
export class IdempotentPrismaModule {
  static forRoot<Client extends PrismaClientLike>(
    create: PrismaClientFactory<Client>,
    options: IdempotentPrismaOptions = {},
  ): DynamicModule {
    const provider = idempotentPrisma(create, options);
    return {
      module: IdempotentPrismaModule,
      global: true,
      providers: [provider],
      exports: [(options.provide ?? IdempotentPrisma) as string | symbol | Function],
    };
  }
}
