export {
  IdempotentTransactionalAdapterTypeOrm,
  type IdempotentTransactionalAdapterTypeOrmOptions,
} from './idempotent-transactional-adapter-typeorm.js';
export type { TypeOrmTransactionOptions } from './typeorm-transactions.js';
export {
  NewTransactionInKeyError,
  TransactionalIsolationError,
  TransactionSuspendedInKeyError,
} from './transactional.errors.js';
export {
  IdempotentTransactionalAdapterPrisma,
  type IdempotentTransactionalAdapterPrismaOptions,
} from './idempotent-transactional-adapter-prisma.js';
export type { KeyAwarePrisma, PrismaTransactionClient, PrismaTransactionOptions } from './prisma-transactions.js';
