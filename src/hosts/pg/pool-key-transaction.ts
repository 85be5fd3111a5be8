import type {
  HandlerSavepoint,
  HandlerScope,
  KeyTransaction,
  SqlStatement,
  Statement,
  StatementResult,
} from '../database-host.js';
import { assertCommitted } from '../wire/commit-outcome.js';
import { HANDLER_SAVEPOINT, ROLLBACK_HANDLER } from '../wire/key-transaction-sql.js';
import type { PgClient } from '../wire/pg-client.js';
import { translated } from '../wire/postgres-failures.js';
import type { MessagePart, StatementSender } from '../wire/statement-sender.js';
import { type EndableConnection, endAndGiveBack } from '../wire/transaction-end.js';
import { executionContext } from '../execution-context.js';
import { KeyClient } from './key-client.js';

/** A client a node-postgres pool lends: given back with `release()`, destroyed with `release(true)`. */
export interface PoolClient extends PgClient {
  query(config: unknown, values?: unknown, callback?: unknown): any;
  release(destroy?: boolean | Error): void;
}

/** The handler's savepoint is never lent here: a tool's transaction sets a savepoint of its own. */
const NO_SAVEPOINT_TO_TAKE: HandlerSavepoint = { take: () => undefined };

/** The key's transaction on a pooled client; the handler's handle is the client's `KeyClient`. */
export class PoolKeyTransaction implements KeyTransaction<KeyClient> {
  private readonly keyClient: KeyClient;
  private released = false;
  /** The client as `endAndGiveBack` ends it: a plain COMMIT or ROLLBACK ends every savepoint too. */
  private readonly connection: EndableConnection & { inTransaction: boolean } = {
    inTransaction: true,
    end: async (how) => {
      const result = await this.client.query(how === 'commit' ? 'COMMIT' : 'ROLLBACK');
      this.connection.inTransaction = false;
      if (how === 'commit') assertCommitted(result);
    },
    giveBack: (destroy) => {
      if (this.released) return;
      this.released = true;
      this.client.release(destroy);
    },
  };

  constructor(
    private readonly client: PoolClient,
    private readonly sender: StatementSender,
    private readonly scope: HandlerScope | undefined,
  ) {
    this.keyClient = KeyClient.carrying(client, (keyClient) => executionContext.getStore()?.handle === keyClient);
  }

  get handle(): KeyClient | undefined {
    return this.released ? undefined : this.keyClient;
  }

  /** Sends the opening message (`START TRANSACTION`, the statements, the handler's savepoint). */
  open(parts: readonly MessagePart[], later: readonly SqlStatement[]): Promise<StatementResult[]> {
    return this.sender.send(this.client, parts, later);
  }

  enterHandler<T>(start: () => T, settled: Promise<void>): T {
    return this.scope ? this.scope(this.handle, start, settled, NO_SAVEPOINT_TO_TAKE) : start();
  }

  async runBeforeHandler(statement: Statement): Promise<StatementResult> {
    try {
      const [result] = await this.sender.send(this.client, [statement, HANDLER_SAVEPOINT]);
      return result;
    } catch (error) {
      throw translated(error);
    }
  }

  async commitWith(statements: readonly Statement[], rollbackHandler: boolean): Promise<number> {
    this.keyClient.close();
    let results: StatementResult[];
    try {
      results = await this.sender.send(
        this.client,
        rollbackHandler ? [ROLLBACK_HANDLER, ...statements, 'COMMIT'] : [...statements, 'COMMIT'],
      );
    } catch (error) {
      await this.end('rollback').catch(() => undefined);
      throw translated(error);
    }
    this.connection.inTransaction = false;
    await this.connection.giveBack(false);
    return results[results.length - 2].rowCount ?? 0;
  }

  async end(how: 'commit' | 'rollback'): Promise<void> {
    this.keyClient.close();
    try {
      await endAndGiveBack(this.connection, how);
    } catch (error) {
      throw translated(error);
    }
  }
}
