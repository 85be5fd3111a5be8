import { Propagation, type TransactionalAdapter, TransactionHost } from '@nestjs-cls/transactional';
import type { DataSource, EntityManager } from 'typeorm';
import { setHandlerScope } from '../handler-scope.js';
import { keyManager } from './key-manager.js';
import { NewTransactionInKeyError, TransactionalIsolationError, TransactionSuspendedInKeyError } from './transactional.errors.js';
import { joinAsSavepoint, markSavepoint } from './join-as-savepoint.js';

/** Options of `IdempotentTransactionalAdapterTypeOrm`: those of `TransactionalAdapterTypeOrm`. */
export interface IdempotentTransactionalAdapterTypeOrmOptions {
  /** The DI token of the TypeORM DataSource (`DataSource`, or `getDataSourceToken('name')`). */
  dataSourceToken: any;
  /** Options of every transaction the adapter starts (an isolation level fails inside an @Idempotent() request). */
  defaultTxOptions?: Partial<TypeOrmTransactionOptions>;
  /** The `connectionName` of the `ClsPluginTransactional` this adapter is given to, when it has one. */
  connectionName?: string;
}

/**
 * The key's EntityManager while the module enters it as the transaction of `TransactionHost`
 * (synchronously, in `withTransaction()`): whichever host instance `getInstance()` returns, its
 * adapter sets it, and the transaction key in the CLS is the same.
 */
let entering: EntityManager | undefined;

export interface TypeOrmTransactionOptions {
  isolationLevel?: 'READ UNCOMMITTED' | 'READ COMMITTED' | 'REPEATABLE READ' | 'SERIALIZABLE';
}

/**
 * `TransactionalAdapterTypeOrm` of `@nestjs-cls/transactional`, aware of `@Idempotent()`
 * requests: swap it in the `ClsPluginTransactional` setup, and inside such a request
 * `txHost.tx` is the key's EntityManager, so every write reached through `TransactionHost`
 * commits or rolls back with the key. There, the outermost `@Transactional()` /
 * `txHost.withTransaction()` (`Propagation.Required`, the default) and every `Propagation.Nested`
 * one run as a savepoint of the key's transaction (its writes are undone if it throws, as its own
 * transaction's would be), and a `Required` one inside joins it; `Mandatory` and `Supports` join
 * the current one; `RequiresNew` and a transaction
 * started inside `NotSupported` would commit on their own, outside the key's transaction, and
 * fail with `NewTransactionInKeyError`; reaching `tx` inside `NotSupported` fails with
 * `TransactionSuspendedInKeyError`; `Never` fails as it does inside any transaction; an isolation
 * level fails with `TransactionalIsolationError` (the key's transaction runs at READ COMMITTED).
 * Outside such a request it behaves exactly as `TransactionalAdapterTypeOrm`.
 */
export class IdempotentTransactionalAdapterTypeOrm
  implements TransactionalAdapter<DataSource, EntityManager, TypeOrmTransactionOptions>
{
  readonly connectionToken: any;
  readonly defaultTxOptions?: Partial<TypeOrmTransactionOptions>;
  readonly optionsFactory: TransactionalAdapter<DataSource, EntityManager, TypeOrmTransactionOptions>['optionsFactory'];
  private readonly connectionName?: string;

  constructor(options: IdempotentTransactionalAdapterTypeOrmOptions) {
    this.connectionToken = options.dataSourceToken;
    this.defaultTxOptions = options.defaultTxOptions;
    this.connectionName = options.connectionName;
    this.optionsFactory = (dataSource) => {
      setHandlerScope(dataSource, (handle, start, settled) => {
        let started!: ReturnType<typeof start>;
        entering = handle as EntityManager;
        try {
          // RequiresNew always reaches wrapWithTransaction below, whatever the app opened before.
          void this.host().withTransaction(Propagation.RequiresNew, {}, () => {
            started = start();
            return settled;
          });
        } finally {
          entering = undefined;
        }
        return started;
      });
      return {
        wrapWithTransaction: async (txOptions, fn, setTx) => {
          if (entering) {
            setTx(entering);
            return fn();
          }
          if (keyManager()) throw new NewTransactionInKeyError();
          return dataSource.transaction(txOptions?.isolationLevel as never, (manager) => {
            setTx(manager);
            return fn();
          });
        },
        wrapWithNestedTransaction: async (txOptions, fn, setTx, tx) => {
          if (keyManager() && txOptions?.isolationLevel) throw new TransactionalIsolationError(txOptions.isolationLevel);
          return tx.transaction(txOptions?.isolationLevel as never, (manager) => {
            setTx(manager);
            markSavepoint();
            return fn();
          });
        },
        getFallbackInstance: () => {
          if (keyManager()) throw new TransactionSuspendedInKeyError();
          return dataSource.manager;
        },
      };
    };
  }

  /** Makes a `Required` transaction inside an @Idempotent() request a savepoint. */
  onModuleInit(): void {
    joinAsSavepoint(this.host());
  }

  private host(): TransactionHost<any> {
    return TransactionHost.getInstance(this.connectionName);
  }
}
