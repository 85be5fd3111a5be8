import type { QueryRunner } from 'typeorm';
import { IdempotencyConfigurationError } from '../../idempotency.errors.js';
import { destroyConnection, type PgClient } from '../wire/pg-client.js';

type Guarded = Pick<
  QueryRunner,
  'startTransaction' | 'commitTransaction' | 'rollbackTransaction' | 'release' | 'query'
>;

/** The guard on a key transaction's QueryRunner: how deep the handler nested it, and how to lift it. */
export interface TransactionGuard {
  /** 1 for the key's own transaction, plus one per nested transaction the handler left open. */
  readonly depth: number;
  /** Whether a statement ran through the QueryRunner since `touched` was last set to false. */
  touched: boolean;
  lift(): void;
}

/**
 * While the key's transaction is held, the app must not end it nor hand its connection back: the
 * key's lock would go with it (a duplicate could run beside the handler), writes committed
 * before the key row would outlive a failure, and a released connection would carry the open
 * transaction to whoever takes it next. So on the key's QueryRunner, `commitTransaction()` and
 * `rollbackTransaction()` of the key's own transaction and `release()` throw (nested
 * transactions, `manager.transaction()` inside the handler, still commit and roll back their
 * savepoints), and so does a nested transaction asking for an isolation level: it would run at
 * the key transaction's READ COMMITTED without a word. Every statement sent through `query()`
 * marks the transaction `touched`. The methods are wrapped on this one QueryRunner instance,
 * through their public signatures. Once the app is shutting down (`shuttingDown()`), `release()`
 * is TypeORM's own closing its pool: the connection is destroyed rather than refused (the server
 * rolls its transaction back; the request fails with a 503).
 */
export function guardKeyTransaction(
  queryRunner: QueryRunner,
  client: PgClient,
  shuttingDown: () => boolean,
): TransactionGuard {
  const own: Guarded = {
    startTransaction: queryRunner.startTransaction,
    commitTransaction: queryRunner.commitTransaction,
    rollbackTransaction: queryRunner.rollbackTransaction,
    release: queryRunner.release,
    query: queryRunner.query,
  };
  const state = { depth: 1, touched: false, lift: () => void Object.assign(queryRunner, own) };
  const guarded = queryRunner as Guarded;
  guarded.startTransaction = async function (isolationLevel?: Parameters<QueryRunner['startTransaction']>[0]) {
    if (isolationLevel !== undefined && isolationLevel !== 'READ COMMITTED')
      return refuse(`a transaction at ${isolationLevel}`);
    await own.startTransaction.call(this, isolationLevel);
    state.depth += 1;
  };
  guarded.commitTransaction = async function () {
    if (state.depth <= 1) return refuse('commitTransaction()');
    await own.commitTransaction.call(this);
    state.depth -= 1;
  };
  guarded.rollbackTransaction = async function () {
    if (state.depth <= 1) return refuse('rollbackTransaction()');
    await own.rollbackTransaction.call(this);
    state.depth -= 1;
  };
  guarded.release = function () {
    if (!shuttingDown()) return refuse('release()');
    destroyConnection(client);
    return own.release.call(this);
  };
  guarded.query = function (this: QueryRunner, ...args: Parameters<QueryRunner['query']>) {
    state.touched = true;
    return (own.query as (...a: unknown[]) => Promise<unknown>).apply(this, args);
  } as QueryRunner['query'];
  return state;
}

function refuse(what: string): Promise<never> {
  return Promise.reject(
    new IdempotencyConfigurationError(
      `${what} on the transaction of an @Idempotent() request: the module commits it, with the key, or rolls it back; ` +
        'the handler runs at READ COMMITTED inside it (lock the rows a decision reads, SELECT … FOR UPDATE)',
    ),
  );
}
