import type { QueryRunner } from 'typeorm';
import { IdempotencyConfigurationError } from '../idempotency.errors.js';

type Guarded = Pick<QueryRunner, 'startTransaction' | 'commitTransaction' | 'rollbackTransaction' | 'release'>;

/**
 * While the key's transaction is held, the app must not end it nor hand its connection back: the
 * key's lock would go with it (a duplicate could run beside the handler), writes committed
 * before the key row would outlive a failure, and a released connection would carry the open
 * transaction to whoever takes it next. So on the key's QueryRunner, `commitTransaction()` and
 * `rollbackTransaction()` of the key's own transaction and `release()` throw (nested
 * transactions, `manager.transaction()` inside the handler, still commit and roll back their
 * savepoints), and so does a nested transaction asking for an isolation level: it would run at
 * the key transaction's READ COMMITTED without a word. Returns what puts the QueryRunner back.
 */
export function guardKeyTransaction(queryRunner: QueryRunner): () => void {
  const own: Guarded = {
    startTransaction: queryRunner.startTransaction,
    commitTransaction: queryRunner.commitTransaction,
    rollbackTransaction: queryRunner.rollbackTransaction,
    release: queryRunner.release,
  };
  const guarded = queryRunner as unknown as Guarded & { transactionDepth: number };
  guarded.startTransaction = function (isolationLevel?: Parameters<QueryRunner['startTransaction']>[0]) {
    if (isolationLevel !== undefined && isolationLevel !== 'READ COMMITTED') return refuse(`a transaction at ${isolationLevel}`);
    return own.startTransaction.call(this, isolationLevel);
  };
  guarded.commitTransaction = function () {
    if (guarded.transactionDepth <= 1) return refuse('commitTransaction()');
    return own.commitTransaction.call(this);
  };
  guarded.rollbackTransaction = function () {
    if (guarded.transactionDepth <= 1) return refuse('rollbackTransaction()');
    return own.rollbackTransaction.call(this);
  };
  guarded.release = () => refuse('release()');
  return () => void Object.assign(queryRunner, own);
}

function refuse(what: string): Promise<never> {
  return Promise.reject(
    new IdempotencyConfigurationError(
      `${what} on the transaction of an @Idempotent() request: the module commits it, with the key, or rolls it back; ` +
        'the handler runs at READ COMMITTED inside it (lock the rows a decision reads, SELECT … FOR UPDATE)',
    ),
  );
}
