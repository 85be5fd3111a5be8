import type { EntityManager } from 'typeorm';
import type {
  HandlerSavepoint,
  HandlerScope,
  KeyTransaction,
  Statement,
  StatementResult,
  TakenSavepoint,
} from '../database-host.js';
import { HANDLER_SAVEPOINT, ROLLBACK_HANDLER } from '../wire/key-transaction-sql.js';
import { destroyConnection } from '../wire/pg-client.js';
import { translated } from '../wire/postgres-failures.js';
import type { StatementSender } from '../wire/statement-sender.js';
import { endAndGiveBack } from '../wire/transaction-end.js';
import type { KeyConnection, TransactionControl } from './transaction-control.js';
import type { TransactionGuard } from './transaction-guard.js';
import { typeOrmFailure } from './typeorm-failures.js';

/**
 * A key transaction on a TypeORM QueryRunner: the handler's handle is the QueryRunner's
 * EntityManager, guarded (`guardKeyTransaction`) until the module ends the transaction.
 */
export class TypeOrmKeyTransaction implements KeyTransaction<EntityManager>, HandlerSavepoint {
  /** Whether a transaction of a tool's holds the handler's savepoint (`take()`). */
  private savepointTaken = false;
  /** Whether the module ended the transaction and gave its connection back. */
  private givenBack = false;

  constructor(
    private readonly connection: KeyConnection,
    private readonly control: TransactionControl,
    private readonly sender: StatementSender,
    private readonly guard: TransactionGuard,
    private readonly scope: HandlerScope | undefined,
  ) {}

  enterHandler<T>(start: () => T, settled: Promise<void>): T {
    return this.scope ? this.scope(this.handle, start, settled, this) : start();
  }

  /**
   * The QueryRunner's EntityManager until the module gives the connection back (its commit's
   * subscribers still get it). A QueryRunner TypeORM released because its connection failed stays
   * the handle: every query through it then fails (`QueryRunnerAlreadyReleasedError`), where any
   * other connection would commit the handler's next write on its own, outside the key's
   * transaction.
   */
  get handle(): EntityManager | undefined {
    return this.givenBack ? undefined : this.connection.queryRunner.manager;
  }

  take(): TakenSavepoint | undefined {
    if (this.guard.touched || this.savepointTaken) return undefined;
    this.savepointTaken = true;
    return {
      release: () => void (this.savepointTaken = false),
      rollback: async () => {
        try {
          await this.sender.send(this.connection.client, [ROLLBACK_HANDLER]);
          this.guard.touched = false;
        } finally {
          this.savepointTaken = false;
        }
      },
    };
  }

  async runBeforeHandler(statement: Statement): Promise<StatementResult> {
    try {
      const [result] = await this.sender.send(this.connection.client, [statement, HANDLER_SAVEPOINT]);
      return result;
    } catch (error) {
      throw translated(error, typeOrmFailure);
    }
  }

  async commitWith(statements: readonly Statement[], rollbackHandler: boolean): Promise<number> {
    this.guard.lift();
    let rowCount: number;
    try {
      rowCount = await this.control.commitWith(this.connection, statements, rollbackHandler, this.guard.depth);
    } catch (error) {
      this.givenBack = true;
      await endAndRelease(this.connection, this.control, 'rollback', this.guard.depth).catch(() => undefined);
      throw translated(error, typeOrmFailure);
    }
    this.givenBack = true;
    await this.connection.queryRunner.release();
    return rowCount;
  }

  async end(how: 'commit' | 'rollback'): Promise<void> {
    this.guard.lift();
    try {
      await endAndRelease(this.connection, this.control, how, this.guard.depth);
    } catch (error) {
      throw translated(error, typeOrmFailure);
    } finally {
      this.givenBack = true;
    }
  }
}

/**
 * Ends whatever transaction the connection has open, at every depth, and gives the connection
 * back (`endAndGiveBack`): `depth` is how deep the handler left it (1: not nested).
 */
export function endAndRelease(
  connection: KeyConnection,
  control: TransactionControl,
  how: 'commit' | 'rollback',
  depth: number,
): Promise<void> {
  const { queryRunner, client } = connection;
  return endAndGiveBack(
    {
      end: (ending) => control.endWhole(connection, ending, depth),
      get inTransaction() {
        return queryRunner.isTransactionActive;
      },
      giveBack: async (destroy) => {
        if (destroy) destroyConnection(client);
        await queryRunner.release();
      },
    },
    how,
  );
}
