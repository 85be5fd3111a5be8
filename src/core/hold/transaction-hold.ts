import { IdempotencyError } from '../../idempotency.errors.js';
import type { KeyTransaction, SqlStatement, Statement } from '../../hosts/database-host.js';
import type { CommittedEffect } from '../../hosts/execution-context.js';
import type { IdempotentRequest } from '../../key/idempotent-request.js';
import type { StoredOutcomes } from '../../store/protect/stored-outcomes.js';
import type { StoredResponse } from '../../store/stored-response.js';
import type { Completion, KeyHold } from './key-hold.js';
import { takeCommitFault } from './commit-faults.js';
import { DatabaseUnavailableError } from '../../hosts/database-failures.js';

/**
 * Transactional mode's hold: the database transaction that holds the key's advisory lock. The
 * handler's business writes go through `handle`; `complete()` writes the key's row with the
 * outcome and commits both together (for a handler that threw, after rolling its writes back to
 * the savepoint set before it ran, in the same message); `release()` ends the transaction
 * without the key's row, rolling the writes back or, with `keepWrites`, committing them.
 */
export class TransactionHold implements KeyHold {
  private ended = false;
  private readonly effects: CommittedEffect[] = [];

  constructor(
    private readonly transaction: KeyTransaction,
    private readonly request: IdempotentRequest,
    /** The statement that writes the key's row with the outcome (`record.sql.ts`). */
    private readonly record: SqlStatement,
    private readonly outcomes: StoredOutcomes,
  ) {}

  get handle(): unknown {
    return this.transaction.handle;
  }

  enterHandler<T>(start: () => T, settled: Promise<void>): T {
    return this.transaction.enterHandler(start, settled);
  }

  get isOpen(): boolean {
    return !this.ended;
  }

  readonly addEffect = (effect: CommittedEffect): void => {
    if (this.ended) throw new IdempotencyError('the key transaction has ended: nothing more commits with it');
    this.effects.push(effect);
  };

  async complete(response: StoredResponse, handlerFailed: boolean): Promise<Completion> {
    if (this.ended) return 'skipped';
    this.ended = true;
    const { scope, fingerprint, ttlMs, tombstoneMs } = this.request;
    const [headers, body] = this.outcomes.columns(response, scope, fingerprint);
    const params = [
      scope.row.key,
      scope.row.caller,
      scope.row.endpoint,
      fingerprint,
      response.status,
      headers,
      body,
      ttlMs,
      tombstoneMs ?? null,
    ];
    const record: Statement = [this.record, params];
    if (takeCommitFault(scope.key)) {
      await this.transaction.end('rollback');
      throw new DatabaseUnavailableError(
        new IdempotencyError('the commit failed on purpose (nestjs-pg-idempotency/testing)'),
        undefined,
      );
    }
    if (handlerFailed || this.effects.length === 0) await this.transaction.commitWith([record], handlerFailed);
    else await this.commitEffects(record);
    return 'recorded';
  }

  async release(keepWrites = false): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    if (keepWrites && this.effects.length > 0) await this.commitEffects();
    else await this.transaction.end(keepWrites ? 'commit' : 'rollback');
  }

  /** Commits the effects' statements (then `last`) with the handler's writes, and tells them. */
  private async commitEffects(last?: Statement): Promise<void> {
    const statements = this.effects.map((effect) => effect.statement());
    await this.transaction.commitWith(last ? [...statements, last] : statements, false);
    for (const effect of this.effects) effect.committed();
  }
}
