import { type TransactionalAdapter, TransactionHost } from '@nestjs-cls/transactional';
import { DatabaseHost } from '../../hosts/database-host.js';
import { joinAsSavepoint } from './join-as-savepoint.js';
import { enterKeyTransaction, keyAwareTransactions } from './key-transactions.js';
import {
  type KeyAwarePrisma,
  type PrismaTransactionClient,
  type PrismaTransactionOptions,
  prismaTransactions,
} from './prisma-transactions.js';
import { checkKeyTransactions } from './self-check.js';

/** Options of `IdempotentTransactionalAdapterPrisma`. */
export interface IdempotentTransactionalAdapterPrismaOptions {
  /** The DI token of the app's `IdempotentPrisma` (`IdempotentPrisma`, or the `provide` given to `idempotentPrisma()`). */
  prismaInjectionToken: any;
  /** Options of every transaction the adapter starts (an isolation level fails inside an @Idempotent() request). */
  defaultTxOptions?: Partial<PrismaTransactionOptions>;
  /** The `connectionName` of the `ClsPluginTransactional` this adapter is given to, when it has one. */
  connectionName?: string;
}

/**
 * `TransactionalAdapterPrisma` of `@nestjs-cls/transactional-adapter-prisma`, aware of
 * `@Idempotent()` requests, on `IdempotentPrisma` (`nestjs-pg-idempotency/prisma`): inside such a
 * request `txHost.tx` is the key's Prisma client, so every write reached through
 * `TransactionHost` commits or rolls back with the key. There, the propagation modes behave as
 * with `IdempotentTransactionalAdapterTypeOrm`: the outermost `@Transactional()` and every
 * `Propagation.Nested` one are savepoints of the key's transaction (a `$transaction()` of the key's
 * client), a `Required` one inside joins; `RequiresNew` and a transaction started inside
 * `NotSupported` fail with `NewTransactionInKeyError`, `tx` inside `NotSupported` with
 * `TransactionSuspendedInKeyError`, an isolation level with `TransactionalIsolationError`.
 * Outside such a request: a `$transaction()` of the app's client, as upstream (a nested one is
 * Prisma's own nested `$transaction()`). At bootstrap it checks all of this on a real key
 * transaction; the app refuses to start otherwise.
 */
export class IdempotentTransactionalAdapterPrisma<
  Client extends PrismaTransactionClient = PrismaTransactionClient,
> implements TransactionalAdapter<KeyAwarePrisma<Client>, Client, PrismaTransactionOptions> {
  readonly connectionToken: any;
  readonly defaultTxOptions?: Partial<PrismaTransactionOptions>;
  readonly extraProviderTokens = [DatabaseHost];
  readonly optionsFactory: TransactionalAdapter<
    KeyAwarePrisma<Client>,
    Client,
    PrismaTransactionOptions
  >['optionsFactory'];
  private readonly connectionName?: string;
  private given?: { database: DatabaseHost; prisma: KeyAwarePrisma<Client> };

  constructor(options: IdempotentTransactionalAdapterPrismaOptions) {
    this.connectionToken = options.prismaInjectionToken;
    this.defaultTxOptions = options.defaultTxOptions;
    this.connectionName = options.connectionName;
    this.optionsFactory = (prisma, [database]: DatabaseHost[]) => {
      this.given = { database, prisma };
      // The scope runs inside the key's execution: `prisma.client` is the key's client there.
      prisma.useHandlerScope((_handle, start, settled, savepoint) =>
        enterKeyTransaction(this.host(), { tx: prisma.client, savepoint }, start, settled),
      );
      return keyAwareTransactions(prismaTransactions(prisma));
    };
  }

  /** Makes a `Required` transaction inside an @Idempotent() request a savepoint. */
  onModuleInit(): void {
    const prisma = this.given?.prisma;
    if (prisma) joinAsSavepoint(this.host(), () => (prisma.isActive ? prisma.client : undefined));
  }

  /** Proves, on a real key transaction, that the cases above hold; throws when one does not. */
  async onApplicationBootstrap(): Promise<void> {
    if (!this.given) return;
    const { database, prisma } = this.given;
    await checkKeyTransactions(this.host(), database, {
      keyTx: () => (prisma.isActive ? prisma.client : undefined),
      value: async (client, sql) => ((await client.$queryRawUnsafe(sql)) as [{ value: string | null }])[0].value,
    });
  }

  private host(): TransactionHost<any> {
    return TransactionHost.getInstance(this.connectionName);
  }
}
