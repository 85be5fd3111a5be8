import type { EntityManager, QueryRunner } from 'typeorm';
import type { StoredResponse } from '../response/stored-response.js';
import type { Completion, KeyHold, KeyRequest } from './key-hold.js';
import { commitWith, endWholeTransaction } from './combined-statements.js';
import { guardKeyTransaction } from './key-transaction-guard.js';
import { rollbackAndRelease } from './release-query-runner.js';
import { INSERT_OUTCOME, ROLLBACK_HANDLER } from './store.sql.js';

/**
 * Transactional mode's hold: the database transaction that holds the key's advisory lock. The
 * handler's business writes go through `manager`; `complete()` inserts the key row with the
 * outcome and commits both together (for a handler that threw, after rolling its writes back to
 * the savepoint set before it ran, in the same message), `release()` rolls both back and frees
 * the key. Either returns the connection. Until then the app cannot end the transaction or
 * return its connection (`guardKeyTransaction`).
 */
export class KeyTransaction implements KeyHold {
  private ended = false;
  private readonly unguard: () => void;

  constructor(
    private readonly queryRunner: QueryRunner,
    private readonly request: KeyRequest,
  ) {
    this.unguard = guardKeyTransaction(queryRunner);
  }

  /** Until the connection went back to the pool (its commit's subscribers still get it). */
  get manager(): EntityManager | undefined {
    return this.queryRunner.isReleased ? undefined : this.queryRunner.manager;
  }

  get isOpen(): boolean {
    return !this.ended;
  }

  async complete(response: StoredResponse, handlerFailed: boolean): Promise<Completion> {
    if (this.ended) return 'skipped';
    this.ended = true;
    this.unguard();
    try {
      const { scope: { key, caller, endpoint }, fingerprint, ttlMs } = this.request;
      // A thrown deterministic error: its writes are undone, its answer is kept.
      await commitWith(
        this.queryRunner,
        INSERT_OUTCOME,
        [key, caller, endpoint, fingerprint, response.status, JSON.stringify(response.headers), response.body, ttlMs],
        handlerFailed ? ROLLBACK_HANDLER : undefined,
      );
    } catch (error) {
      await rollbackAndRelease(this.queryRunner);
      throw error;
    }
    await this.queryRunner.release();
    return 'recorded';
  }

  async release(keepWrites = false): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    this.unguard();
    if (keepWrites) {
      try {
        await endWholeTransaction(this.queryRunner, 'COMMIT');
      } catch (error) {
        await rollbackAndRelease(this.queryRunner);
        throw error;
      }
      return this.queryRunner.release();
    }
    await rollbackAndRelease(this.queryRunner);
  }
}
