import { Logger } from '@nestjs/common';
import type { DataSource, QueryRunner } from 'typeorm';
import {
  HANDLER_SAVEPOINT,
  READ_COMMITTED,
  ROLLBACK_HANDLER,
  START_KEY_TRANSACTION,
} from '../wire/key-transaction-sql.js';
import { assertCommitted } from '../wire/commit-outcome.js';
import type { PgClient } from '../wire/pg-client.js';
import type { MessagePart, StatementSender } from '../wire/statement-sender.js';
import type { SqlStatement, Statement, StatementResult } from '../database-host.js';
import type { TypeOrmAccess } from './self-check.js';
import { setTransactionState } from './transaction-state.js';

const logger = new Logger('Idempotency');

/** One connection's key transaction as the TypeORM adapter drives it. */
export interface KeyConnection {
  queryRunner: QueryRunner;
  client: PgClient;
}

/**
 * How the TypeORM adapter starts, commits and ends a key transaction on a QueryRunner (see
 * `TypeOrmAccess`). Subscribers hear the transaction's events as TypeORM would announce them: a
 * start, then a commit, or a rollback when the handler's writes were rolled back (a rollback of
 * the savepoint, as TypeORM announces a nested one); one failing after the end is logged (what
 * was committed stands).
 */
export interface TransactionControl {
  /** Starts the transaction, sends `parts`, sets the handler's savepoint; returns the parts' results. */
  open(
    connection: KeyConnection,
    parts: readonly Statement[],
    later: readonly SqlStatement[],
  ): Promise<StatementResult[]>;
  /**
   * Sends `statements` (after rolling back to the savepoint, with `rollbackHandler`), then commits
   * the transaction whole, at every `depth` the handler left it at; returns the last statement's row count.
   */
  commitWith(
    connection: KeyConnection,
    statements: readonly Statement[],
    rollbackHandler: boolean,
    depth: number,
  ): Promise<number>;
  /** Ends the transaction whole: `depth` is how deep the handler left it (1: not nested). */
  endWhole(connection: KeyConnection, how: 'commit' | 'rollback', depth: number): Promise<void>;
}

type TransactionEvent = `${'Before' | 'After'}Transaction${'Start' | 'Commit' | 'Rollback'}`;

export function transactionControl(
  access: TypeOrmAccess,
  dataSource: DataSource,
  sender: StatementSender,
): TransactionControl {
  /**
   * Announces `event` to the DataSource's subscribers; with none (the common case) it is
   * `undefined`, and nothing is awaited: `if (pending) await pending`.
   */
  const announce = (queryRunner: QueryRunner, event: TransactionEvent): Promise<void> | undefined =>
    dataSource.subscribers.length > 0 ? queryRunner.broadcaster.broadcast(event) : undefined;
  /** The same after the transaction ended: a subscriber's failure is logged (what was done stands). */
  const announceEnd = (queryRunner: QueryRunner, event: TransactionEvent): Promise<void> | undefined =>
    announce(queryRunner, event)?.catch(afterEndFailed);
  const send = (client: PgClient, parts: readonly MessagePart[], later?: readonly SqlStatement[]) =>
    sender.send(client, parts, later);
  return access === 'combined'
    ? {
        async open({ queryRunner, client }, parts, later) {
          let pending = announce(queryRunner, 'BeforeTransactionStart');
          if (pending) await pending;
          setTransactionState(queryRunner, true, 1);
          const results = await send(client, [START_KEY_TRANSACTION, ...parts, HANDLER_SAVEPOINT], later);
          pending = announce(queryRunner, 'AfterTransactionStart');
          if (pending) await pending;
          return results.slice(1, 1 + parts.length);
        },
        async commitWith({ queryRunner, client }, statements, rollbackHandler) {
          let pending = announce(
            queryRunner,
            rollbackHandler ? 'BeforeTransactionRollback' : 'BeforeTransactionCommit',
          );
          if (pending) await pending;
          const results = await send(
            client,
            rollbackHandler ? [ROLLBACK_HANDLER, ...statements, 'COMMIT'] : [...statements, 'COMMIT'],
          );
          setTransactionState(queryRunner, false, 0);
          pending = announceEnd(queryRunner, rollbackHandler ? 'AfterTransactionRollback' : 'AfterTransactionCommit');
          if (pending) await pending;
          return results[results.length - 2].rowCount ?? 0;
        },
        async endWhole({ queryRunner, client }, how) {
          let pending = announce(
            queryRunner,
            how === 'commit' ? 'BeforeTransactionCommit' : 'BeforeTransactionRollback',
          );
          if (pending) await pending;
          const result = await client.query(how === 'commit' ? 'COMMIT' : 'ROLLBACK');
          setTransactionState(queryRunner, false, 0);
          if (how === 'commit') assertCommitted(result);
          pending = announceEnd(queryRunner, how === 'commit' ? 'AfterTransactionCommit' : 'AfterTransactionRollback');
          if (pending) await pending;
        },
      }
    : {
        async open({ queryRunner, client }, parts, later) {
          const preparation = sender.prepareAhead(client, parts.map(([statement]) => statement).concat(later));
          if (preparation) await preparation;
          await queryRunner.startTransaction();
          const results = await send(client, [READ_COMMITTED, ...parts, HANDLER_SAVEPOINT], later);
          return results.slice(1, 1 + parts.length);
        },
        async commitWith({ queryRunner, client }, statements, rollbackHandler, depth) {
          // The nested transactions the handler left open end first, as TypeORM ends them (their
          // savepoints released): the outcome is then sent at the key transaction's own level.
          for (let level = depth; level > 1 && queryRunner.isTransactionActive; level--)
            await queryRunner.commitTransaction();
          const before = rollbackHandler ? announce(queryRunner, 'BeforeTransactionRollback') : undefined;
          if (before) await before;
          const results = await send(client, rollbackHandler ? [ROLLBACK_HANDLER, ...statements] : statements);
          const after = rollbackHandler ? announceEnd(queryRunner, 'AfterTransactionRollback') : undefined;
          if (after) await after;
          await committed(queryRunner, () => queryRunner.commitTransaction());
          return results[results.length - 1].rowCount ?? 0;
        },
        async endWhole({ queryRunner }, how, depth) {
          // A transaction a failed statement aborted would roll back at COMMIT without a word
          // through TypeORM: a statement run in it first fails instead (25P02).
          if (how === 'commit' && queryRunner.isTransactionActive) await queryRunner.query('SELECT 1');
          for (let level = depth; level > 0 && queryRunner.isTransactionActive; level--) {
            if (how === 'rollback') await queryRunner.rollbackTransaction();
            else await committed(queryRunner, () => queryRunner.commitTransaction());
          }
        },
      };
}

/**
 * Runs TypeORM's `commitTransaction()`, which announces the commit after it: a subscriber that
 * fails then cannot undo the commit, so its failure is logged, not thrown (the client would be
 * told nothing was kept).
 */
async function committed(queryRunner: QueryRunner, commit: () => Promise<void>): Promise<void> {
  const wasActive = queryRunner.isTransactionActive;
  try {
    await commit();
  } catch (error) {
    // TypeORM marks the transaction inactive once its COMMIT went through, before the announcement.
    if (!(wasActive && !queryRunner.isTransactionActive)) throw error;
    afterEndFailed(error);
  }
}

/** Logs a subscriber's failure once the key's transaction had ended (what it did stands). */
function afterEndFailed(error: unknown): void {
  logger.error(
    `a TypeORM subscriber failed after the key's transaction ended (what it did stands): ${(error as Error)?.message ?? String(error)}`,
  );
}
