import { PrismaPg } from '@prisma/adapter-pg';
import type pg from 'pg';
import { IdempotencyConfigurationError } from '../../idempotency.errors.js';

/** The options `PrismaPg` takes besides its pool (`schema`, `userDefinedTypeParser`, …). */
export type PrismaPgOptions = NonNullable<ConstructorParameters<typeof PrismaPg>[1]>;

type PrismaPgAdapter = Awaited<ReturnType<PrismaPg['connect']>>;

/**
 * `PrismaPg` (`@prisma/adapter-pg`) on one key transaction's connection: what `IdempotentPrisma`
 * gives the app's `PrismaClient` factory for each pooled connection that carries key
 * transactions. Every query of that client runs on the key's connection, inside the key's
 * transaction; an interactive or batch `$transaction()` is a savepoint of it (a nested one a
 * savepoint inside that); an isolation level other than READ COMMITTED, the key transaction's, is
 * refused. Built only by the module: outside a key, the app's client runs on plain `PrismaPg`.
 */
export class IdempotentPrismaPg extends PrismaPg {
  constructor(
    private readonly keyPool: pg.Pool,
    options?: PrismaPgOptions,
  ) {
    super(keyPool, { ...options, disposeExternalPool: false });
  }

  override async connect(): Promise<PrismaPgAdapter> {
    const adapter = await super.connect();
    // PrismaPg takes a pool it recognises as its own pg's Pool: any other it reads as a config, and
    // opens connections of its own, outside the key's transaction.
    if (adapter.underlyingDriver() !== this.keyPool) {
      throw new IdempotencyConfigurationError(
        "@prisma/adapter-pg did not take the key's connection as its pool (two copies of pg installed?): " +
          "Prisma's queries would run outside the key's transaction; install one pg, or use lease mode (@Idempotent({ mode: 'lease' }))",
      );
    }
    const startTransaction = adapter.startTransaction.bind(adapter);
    adapter.startTransaction = async (isolationLevel) => {
      if (isolationLevel !== undefined && isolationLevel !== 'READ COMMITTED') {
        throw new IdempotencyConfigurationError(
          `a Prisma $transaction() at ${isolationLevel} inside an @Idempotent() request: it is a savepoint of the key's transaction, ` +
            "which runs at READ COMMITTED (the key's lookup needs it); remove the isolationLevel and lock the rows a decision reads (SELECT … FOR UPDATE)",
        );
      }
      return startTransaction();
    };
    return adapter;
  }
}
