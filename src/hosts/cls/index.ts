export {
  IdempotentTransactionalAdapterTypeOrm,
  type IdempotentTransactionalAdapterTypeOrmOptions,
  type TypeOrmTransactionOptions,
} from './idempotent-transactional-adapter-typeorm.js';
export { NewTransactionInKeyError, TransactionalIsolationError, TransactionSuspendedInKeyError } from './transactional.errors.js';
