import type { EntityManager } from 'typeorm';
import { HANDLER_SAVEPOINT } from '../pg/key-transaction-sql.js';
import { destroyConnection } from '../pg/pg-client.js';
import type { StatementSender } from '../pg/statement-sender.js';
import type { HandlerScope } from '../handler-scope.js';
import type { KeyTransaction, Statement, StatementResult } from '../transaction-host.js';
import type { KeyConnection, TransactionControl } from './transaction-control.js';
import type { TransactionGuard } from './transaction-guard.js';

/**
 * A key transaction on a TypeORM QueryRunner: the handler's handle is the QueryRunner's
 * EntityManager, guarded (`guardKeyTransaction`) until the module ends the transaction.
 */
export class TypeOrmKeyTransaction implements KeyTransaction<EntityManager> {
  constructor(
    private readonly connection: KeyConnection,
    private readonly control: TransactionControl,
    private readonly sender: StatementSender,
    private readonly guard: TransactionGuard,
    private readonly scope: HandlerScope | undefined,
  ) {}

  enterHandler<T>(start: () => T, settled: Promise<void>): T {
    return this.scope ? this.scope(this.handle, start, settled) : start();
  }

  /** Until the connection went back to the pool (its commit's subscribers still get it). */
  get handle(): EntityManager | undefined {
    const { queryRunner } = this.connection;
    return queryRunner.isReleased ? undefined : queryRunner.manager;
  }

  async runBeforeHandler(statement: Statement): Promise<StatementResult> {
    const [result] = await this.sender.send(this.connection.client, [statement, HANDLER_SAVEPOINT]);
    return result;
  }

  async commitWith(statement: Statement, rollbackHandler: boolean): Promise<number> {
    this.guard.lift();
    let rowCount: number;
    try {
      rowCount = await this.control.commitWith(this.connection, statement, rollbackHandler, this.guard.depth);
    } catch (error) {
      await endAndRelease(this.connection, this.control, 'rollback', this.guard.depth).catch(() => undefined);
      throw error;
    }
    await this.connection.queryRunner.release();
    return rowCount;
  }

  async end(how: 'commit' | 'rollback'): Promise<void> {
    this.guard.lift();
    await endAndRelease(this.connection, this.control, how, this.guard.depth);
  }
}

/**
 * Ends whatever transaction the connection has open, at every depth, and gives the connection
 * back. A connection still inside a transaction afterwards (its ROLLBACK failed) is destroyed
 * instead, so that no later request can run inside a half-finished transaction; a failed
 * `commit` is rolled back that way, and its error thrown.
 */
export async function endAndRelease(connection: KeyConnection, control: TransactionControl, how: 'commit' | 'rollback', depth: number): Promise<void> {
  const { queryRunner, client } = connection;
  let failure: unknown;
  if (queryRunner.isTransactionActive) {
    try {
      await control.endWhole(connection, how, depth);
    } catch (error) {
      failure = error;
      if (how === 'commit') await control.endWhole(connection, 'rollback', depth).catch(() => undefined);
    }
    if (queryRunner.isTransactionActive) destroyConnection(client);
  }
  await queryRunner.release();
  if (failure !== undefined && how === 'commit') throw failure;
}
