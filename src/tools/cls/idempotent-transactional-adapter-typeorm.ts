import { type TransactionalAdapter, TransactionHost } from '@nestjs-cls/transactional';
import type { DataSource, EntityManager } from 'typeorm';
import { IdempotencyConfigurationError } from '../../idempotency.errors.js';
import { DatabaseHost } from '../../hosts/database-host.js';
import { joinAsSavepoint } from './join-as-savepoint.js';
import { checkKeyTransactions } from './self-check.js';
import { enterKeyTransaction, keyAwareTransactions } from './key-transactions.js';
import { keyManager, type TypeOrmTransactionOptions, typeOrmTransactions } from './typeorm-transactions.js';

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
 *
 * The adapter reaches the module's database host by DI (`IdempotencyModule` is global by default;
 * with `isGlobal: false`, give the plugin `imports: [IdempotencyModule]`), and checks at bootstrap,
 * on a real key transaction, that all of the above holds; the app refuses to start otherwise.
 */
export class IdempotentTransactionalAdapterTypeOrm implements TransactionalAdapter<
  DataSource,
  EntityManager,
  TypeOrmTransactionOptions
> {
  readonly connectionToken: any;
  readonly defaultTxOptions?: Partial<TypeOrmTransactionOptions>;
  readonly extraProviderTokens = [DatabaseHost];
  readonly optionsFactory: TransactionalAdapter<DataSource, EntityManager, TypeOrmTransactionOptions>['optionsFactory'];
  private readonly connectionName?: string;
  /** The module's database host and the DataSource this adapter was given, once the plugin built it. */
  private given?: { database: DatabaseHost; dataSource: DataSource };

  constructor(options: IdempotentTransactionalAdapterTypeOrmOptions) {
    this.connectionToken = options.dataSourceToken;
    this.defaultTxOptions = options.defaultTxOptions;
    this.connectionName = options.connectionName;
    this.optionsFactory = (dataSource, [database]: DatabaseHost[]) => {
      this.given = { database, dataSource };
      database.useHandlerScope(dataSource, (handle, start, settled, savepoint) =>
        enterKeyTransaction(this.host(), { tx: handle as EntityManager, savepoint }, start, settled),
      );
      return keyAwareTransactions(typeOrmTransactions(dataSource));
    };
  }

  /** Makes a `Required` transaction inside an @Idempotent() request a savepoint. */
  onModuleInit(): void {
    joinAsSavepoint(this.host(), keyManager);
  }

  /** Proves, on a real key transaction, that the cases above hold; throws when one does not. */
  async onApplicationBootstrap(): Promise<void> {
    if (!this.given) return;
    const { database, dataSource } = this.given;
    if (database.defaultHandle !== dataSource.manager) {
      throw new IdempotencyConfigurationError(
        "IdempotentTransactionalAdapterTypeOrm was given another DataSource than the one IdempotencyModule reserves keys on: its writes would commit outside the key's transaction; " +
          'give both the same DataSource (the "dataSource" option of IdempotencyModule, the "dataSourceToken" of the adapter)',
      );
    }
    await checkKeyTransactions(this.host(), database, {
      keyTx: keyManager,
      value: async (manager, sql) => ((await manager.query(sql)) as [{ value: string | null }])[0].value,
    });
  }

  private host(): TransactionHost<any> {
    return TransactionHost.getInstance(this.connectionName);
  }
}
