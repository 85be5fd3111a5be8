import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { IDEMPOTENCY_SETTINGS } from '../../idempotency.constants.js';
import { IdempotencyConfigurationError } from '../../idempotency.errors.js';
import type { PgPoolLike } from '../../options/module-options.js';
import type { IdempotencySettings } from '../../options/settings.js';
import type { DatabaseFailure } from '../database-failures.js';
import type {
  Bound,
  DatabaseHost,
  HandlerScope,
  OpenedTransaction,
  SqlStatement,
  Statement,
  StatementResult,
} from '../database-host.js';
import { type PooledConnection, runBounded } from '../wire/bounded-statement.js';
import { HANDLER_SAVEPOINT, START_KEY_TRANSACTION } from '../wire/key-transaction-sql.js';
import { OWN_POOL_SIZE, OwnPool } from '../wire/own-pool.js';
import { FailureReading, translated } from '../wire/postgres-failures.js';
import { onceMoreIfVanished, StatementSender } from '../wire/statement-sender.js';
import type { KeyClient } from './key-client.js';
import { type PoolClient, PoolKeyTransaction } from './pool-key-transaction.js';

/**
 * The host of a node-postgres `Pool` (the `pool` option), for apps with no TypeORM: the key's
 * transaction is a pooled client's, driven with node-postgres's public API only, and the
 * handler's handle a `KeyClient` over it (what `nestjs-pg-idempotency/drizzle` binds Drizzle to).
 */
@Injectable()
export class PgPoolHost implements DatabaseHost<KeyClient>, OnApplicationShutdown {
  private readonly pool: PgPoolLike;
  private readonly sender: StatementSender;
  private readonly ownPool: OwnPool<PgPoolLike>;
  private readonly failures = new FailureReading();
  /** The scope a transaction tool registered (`useHandlerScope`). */
  private scope?: HandlerScope;

  constructor(@Inject(IDEMPOTENCY_SETTINGS) settings: IdempotencySettings) {
    if (!settings.pool) throw new IdempotencyConfigurationError('the node-postgres host needs the "pool" option');
    const pool = settings.pool;
    this.pool = pool;
    this.sender = new StatementSender(settings.preparedStatements);
    this.ownPool = new OwnPool({
      open: async () => {
        const Pool = pool.constructor as new (options: object) => PgPoolLike;
        const own = new Pool({ ...pool.options, max: OWN_POOL_SIZE });
        own.on('error', () => undefined);
        return own;
      },
      lend,
      end: (own) => own.end(),
    });
  }

  /** Outside a key transaction there is no handle of the module's: the app uses its own pool. */
  get defaultHandle(): undefined {
    return undefined;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.ownPool.close();
  }

  async begin(statements: readonly Statement[], later: readonly SqlStatement[]): Promise<OpenedTransaction<KeyClient>> {
    try {
      return await onceMoreIfVanished(() => this.open(statements, later));
    } catch (error) {
      throw translated(error);
    }
  }

  runAlone(what: string, statement: Statement, bound: Bound): Promise<StatementResult> {
    return this.runTogether(what, [statement], bound).then(([result]) => result);
  }

  runTogether(what: string, statements: readonly Statement[], bound: Bound): Promise<StatementResult[]> {
    return runBounded(() => lend(this.pool), this.sender, what, statements, bound);
  }

  runOnOwnPool(what: string, statement: Statement, bound: Bound): Promise<StatementResult> {
    return runBounded(() => this.ownPool.connect(), this.sender, what, [statement], bound).then(([result]) => result);
  }

  failureOf(error: unknown): DatabaseFailure | undefined {
    return this.failures.failureOf(error);
  }

  readFailuresThrough(unwrap: (error: unknown) => unknown): void {
    this.failures.through(unwrap);
  }

  useHandlerScope(database: object, scope: HandlerScope): void {
    if (database !== this.pool) {
      throw new IdempotencyConfigurationError(
        'a transaction tool registered for another pool than the one IdempotencyModule reserves keys on (the "pool" option): ' +
          "its writes would commit outside the key's transaction; give both the same pool",
      );
    }
    this.scope = scope;
  }

  private async open(
    statements: readonly Statement[],
    later: readonly SqlStatement[],
  ): Promise<OpenedTransaction<KeyClient>> {
    const transaction = new PoolKeyTransaction((await this.pool.connect()) as PoolClient, this.sender, this.scope);
    try {
      const results = await transaction.open([START_KEY_TRANSACTION, ...statements, HANDLER_SAVEPOINT], later);
      return { transaction, results: results.slice(1, 1 + statements.length) };
    } catch (error) {
      await transaction.end('rollback').catch(() => undefined);
      throw error;
    }
  }
}

async function lend(pool: PgPoolLike): Promise<PooledConnection> {
  const client = (await pool.connect()) as PoolClient;
  let released = false;
  return {
    client,
    release: () => {
      if (released) return;
      released = true;
      client.release();
    },
  };
}
