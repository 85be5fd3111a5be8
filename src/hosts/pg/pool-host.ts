import { type BeforeApplicationShutdown, Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { IDEMPOTENCY_SETTINGS } from '../../idempotency.constants.js';
import { IdempotencyConfigurationError } from '../../idempotency.errors.js';
import type { PgPoolLike } from '../../options/module-options.js';
import type { IdempotencySettings } from '../../options/settings.js';
import type { Bound, KeyTransaction, OpenedTransaction, SqlStatement, Statement, StatementResult, TransactionHost } from '../transaction-host.js';
import { type PooledConnection, runBounded } from './bounded-statement.js';
import { assertCommitted } from './commit-outcome.js';
import { KeyClient } from './key-client.js';
import { HANDLER_SAVEPOINT, ROLLBACK_HANDLER, START_KEY_TRANSACTION } from './key-transaction-sql.js';
import type { PgClient } from './pg-client.js';
import { StatementSender } from './statement-sender.js';
import { executionContext } from '../../transaction/transaction-context.js';

/** A client a node-postgres pool lends: given back with `release()`, destroyed with `release(true)`. */
interface PoolClient extends PgClient {
  query(config: unknown, values?: unknown, callback?: unknown): any;
  release(destroy?: boolean | Error): void;
}

/** Connections of the module's own pool (lease mode's statements); each takes about a millisecond. */
const OWN_POOL_SIZE = 2;

/**
 * The transaction host of a node-postgres `Pool` (the `pool` option), for apps with no TypeORM:
 * the key's transaction is a pooled client's, driven with node-postgres's public API only, and
 * the handler's handle a `KeyClient` over it (what `nestjs-pg-idempotency/drizzle` binds Drizzle to).
 */
@Injectable()
export class PgPoolTransactionHost implements TransactionHost<KeyClient>, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly pool: PgPoolLike;
  private readonly sender: StatementSender;
  private ownPool?: PgPoolLike;
  private shuttingDown = false;

  constructor(@Inject(IDEMPOTENCY_SETTINGS) settings: IdempotencySettings) {
    if (!settings.pool) throw new IdempotencyConfigurationError('the node-postgres host needs the "pool" option');
    this.pool = settings.pool;
    this.sender = new StatementSender(settings.preparedStatements);
  }

  /** Outside a key transaction there is no handle of the module's: the app uses its own pool. */
  get defaultHandle(): undefined {
    return undefined;
  }

  beforeApplicationShutdown(): void {
    this.shuttingDown = true;
  }

  async onApplicationShutdown(): Promise<void> {
    const own = this.ownPool;
    this.ownPool = undefined;
    await own?.end();
  }

  async begin(statements: readonly Statement[], later: readonly SqlStatement[]): Promise<OpenedTransaction<KeyClient>> {
    const client = (await this.pool.connect()) as PoolClient;
    try {
      const results = await this.sender.send(client, [START_KEY_TRANSACTION, ...statements, HANDLER_SAVEPOINT], later);
      return { transaction: new PoolKeyTransaction(client, this.sender), results: results.slice(1, 1 + statements.length) };
    } catch (error) {
      await endAndRelease(client, 'ROLLBACK').catch(() => undefined);
      throw error;
    }
  }

  runAlone(what: string, statement: Statement, bound: Bound): Promise<StatementResult> {
    return this.runTogether(what, [statement], bound).then(([result]) => result);
  }

  runTogether(what: string, statements: readonly Statement[], bound: Bound): Promise<StatementResult[]> {
    return runBounded(() => lend(this.pool), this.sender, what, statements, bound);
  }

  runOnOwnPool(what: string, statement: Statement, bound: Bound): Promise<StatementResult> {
    return runBounded(() => lend(this.own()), this.sender, what, [statement], bound).then(([result]) => result);
  }

  /** A pool of the module's own beside the app's, with its options and two connections. */
  private own(): PgPoolLike {
    if (this.shuttingDown) throw new Error('nestjs-pg-idempotency: the app has shut down; lease-mode statements are no longer sent');
    if (this.ownPool) return this.ownPool;
    const Pool = this.pool.constructor as new (options: object) => PgPoolLike;
    const pool = new Pool({ ...this.pool.options, max: OWN_POOL_SIZE });
    pool.on('error', () => undefined);
    return (this.ownPool = pool);
  }
}

/** The key's transaction on a pooled client. */
class PoolKeyTransaction implements KeyTransaction<KeyClient> {
  private readonly keyClient: KeyClient;
  private released = false;

  constructor(
    private readonly client: PoolClient,
    private readonly sender: StatementSender,
  ) {
    this.keyClient = KeyClient.carrying(client, (keyClient) => executionContext.getStore()?.handle === keyClient);
  }

  get handle(): KeyClient | undefined {
    return this.released ? undefined : this.keyClient;
  }

  enterHandler<T>(start: () => T): T {
    return start();
  }

  async runBeforeHandler(statement: Statement): Promise<StatementResult> {
    const [result] = await this.sender.send(this.client, [statement, HANDLER_SAVEPOINT]);
    return result;
  }

  async commitWith(statement: Statement, rollbackHandler: boolean): Promise<number> {
    this.keyClient.close();
    let results: StatementResult[];
    try {
      results = await this.sender.send(this.client, rollbackHandler ? [ROLLBACK_HANDLER, statement, 'COMMIT'] : [statement, 'COMMIT']);
    } catch (error) {
      this.released = true;
      await endAndRelease(this.client, 'ROLLBACK').catch(() => undefined);
      throw error;
    }
    this.released = true;
    this.client.release();
    return results[results.length - 2].rowCount ?? 0;
  }

  async end(how: 'commit' | 'rollback'): Promise<void> {
    this.keyClient.close();
    this.released = true;
    await endAndRelease(this.client, how === 'commit' ? 'COMMIT' : 'ROLLBACK');
  }
}

/**
 * Ends the client's transaction whole (a plain COMMIT or ROLLBACK ends every savepoint too) and
 * gives the client back; a client whose command fails is destroyed instead, so that no later
 * request runs inside a half-finished transaction. A failed COMMIT is thrown, and so is a COMMIT
 * that rolled back (`RolledBackAtCommitError`).
 */
async function endAndRelease(client: PoolClient, end: 'COMMIT' | 'ROLLBACK'): Promise<void> {
  let result: unknown;
  try {
    result = await client.query(end);
  } catch (error) {
    client.release(true);
    if (end === 'COMMIT') throw error;
    return;
  }
  client.release();
  if (end === 'COMMIT') assertCommitted(result);
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
