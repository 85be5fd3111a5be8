import type { CommittedEffect } from '../../hosts/execution-context.js';
import type { StoredResponse } from '../../store/stored-response.js';

/**
 * What a request holds once it reserved its key: a transaction (transactional mode) or a lease
 * (lease mode). Exactly one of `complete()` and `release()` ends it; later calls do nothing.
 */
export interface KeyHold {
  /** The handler's database handle inside the key's transaction (transactional mode only), until it ended. */
  readonly handle?: unknown;
  readonly isOpen: boolean;
  /**
   * Adds a write committed with the outcome when the work succeeded: by `complete()` of a work
   * that did not fail, and by `release(true)` (lease mode takes the outbox's staged messages only,
   * written in its recording's statement).
   */
  readonly addEffect?: (effect: CommittedEffect) => void;
  /** Starts the handler in the scope its database host gives it (see `KeyTransaction.enterHandler`). */
  enterHandler<T>(start: () => T, settled: Promise<void>): T;
  /**
   * Records the outcome. `handlerFailed`: the handler threw (a deterministic 4xx is still
   * recorded, but its business writes are not kept).
   */
  complete(response: StoredResponse, handlerFailed: boolean): Promise<Completion>;
  /**
   * Frees the key without recording anything, undoing what can be undone; with `keepWrites`
   * (a success the route does not store), the handler's writes commit without the key's row.
   */
  release(keepWrites?: boolean): Promise<void>;
}

/**
 * How completing a hold ended: `recorded`; `skipped` when the hold had already ended (nothing
 * done); `lost` when a lease was taken over before the holder finished (nothing recorded; the
 * newer holder's outcome stands).
 */
export type Completion = 'recorded' | 'skipped' | 'lost';
