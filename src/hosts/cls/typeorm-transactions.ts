import { Propagation, type TransactionHost, type TransactionalAdapter } from '@nestjs-cls/transactional';
import type { DataSource, EntityManager } from 'typeorm';
import type { HandlerSavepoint } from '../database-host.js';
import { keyManager } from './key-manager.js';
import { handlerSavepoint, keepHandlerSavepoint, markSavepoint } from './key-savepoints.js';
import { NewTransactionInKeyError, TransactionalIsolationError, TransactionSuspendedInKeyError } from './transactional.errors.js';

export interface TypeOrmTransactionOptions {
  isolationLevel?: 'READ UNCOMMITTED' | 'READ COMMITTED' | 'REPEATABLE READ' | 'SERIALIZABLE';
}

type AdapterOptions = ReturnType<TransactionalAdapter<DataSource, EntityManager, TypeOrmTransactionOptions>['optionsFactory']>;

/** The key's transaction being entered as the host's transaction, carried in the options of that one call. */
const ENTERING = Symbol('nestjs-pg-idempotency:entering-key');

interface Entering {
  handle: EntityManager;
  savepoint: HandlerSavepoint;
}

type EnteringOptions = TypeOrmTransactionOptions & { [ENTERING]?: Entering };

/**
 * Starts the handler with `host`'s transaction set to the key's (`handle`), until `settled`:
 * `Propagation.RequiresNew` always reaches `wrapWithTransaction`, whatever the app opened before,
 * and the key's transaction rides in the options of that call alone.
 */
export function enterKeyTransaction<T>(host: TransactionHost<any>, entering: Entering, start: () => T, settled: Promise<void>): T {
  let started!: T;
  const options: EnteringOptions = { [ENTERING]: entering };
  void host.withTransaction(Propagation.RequiresNew, options as never, () => {
    started = start();
    return settled;
  });
  return started;
}

/**
 * What the adapter does in each case (see `IdempotentTransactionalAdapterTypeOrm`): outside an
 * `@Idempotent()` request exactly what `TransactionalAdapterTypeOrm` does; inside one, a nested
 * transaction is a savepoint of the key's transaction (the handler's own savepoint when nothing
 * ran since it was set: no SAVEPOINT sent), and a transaction of its own or a suspended one fails.
 */
export function typeOrmTransactions(dataSource: DataSource): AdapterOptions {
  return {
    wrapWithTransaction: async (txOptions: EnteringOptions, fn, setTx) => {
      const entering = txOptions?.[ENTERING];
      if (entering) {
        setTx(entering.handle);
        keepHandlerSavepoint(entering.savepoint);
        return fn();
      }
      if (keyManager()) throw new NewTransactionInKeyError();
      return dataSource.transaction(txOptions?.isolationLevel as never, (manager) => {
        setTx(manager);
        return fn();
      });
    },
    wrapWithNestedTransaction: async (txOptions, fn, setTx, tx) => {
      const key = keyManager();
      if (key && txOptions?.isolationLevel) throw new TransactionalIsolationError(txOptions.isolationLevel);
      const taken = key !== undefined && tx === key ? handlerSavepoint()?.take() : undefined;
      if (!taken) {
        return tx.transaction(txOptions?.isolationLevel as never, (manager) => {
          setTx(manager);
          markSavepoint();
          return fn();
        });
      }
      setTx(tx);
      markSavepoint();
      let result: unknown;
      try {
        result = await fn();
      } catch (error) {
        await taken.rollback().catch(() => undefined);
        throw error;
      }
      taken.release();
      return result;
    },
    getFallbackInstance: () => {
      if (keyManager()) throw new TransactionSuspendedInKeyError();
      return dataSource.manager;
    },
  };
}
