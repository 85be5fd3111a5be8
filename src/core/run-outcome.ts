import type { Tombstone } from '../store/tombstone.js';

export type { Tombstone };

/**
 * Why no key was taken: the store could not be reached, the app is shutting down, or a recorded
 * outcome cannot be read (each passes: try again later); or the key table does not exist
 * (`not-migrated`: nothing passes until the migration runs; the error says how).
 */
export type UnavailableReason = 'store' | 'shutting-down' | 'outcome-unreadable' | 'not-migrated';

/**
 * What running work under a key came to, for the entry that asked (`IdempotencyService.run()`
 * returns it as it is; the message entry maps it to an ack, a requeue or a dead letter).
 */
export type RunOutcome<T = unknown> =
  /** The work ran once, here, and its result was recorded with its writes. */
  | { kind: 'executed'; value: T }
  /** The key had completed: the work did not run; `value` is the recorded result, as JSON gives it back. */
  | { kind: 'replayed'; value: unknown }
  /** The key had completed with a recorded failure: the work did not run. */
  | { kind: 'failed-before'; error: string }
  /** Another run holds the key right now: the work did not run; try again later. */
  | { kind: 'held'; retryAfterSeconds?: number }
  /** The key was used with another payload: the work did not run. */
  | { kind: 'mismatch' }
  /**
   * The key completed longer ago than its ttl and its tombstone is kept (`tombstone`): the work did
   * not run, and its result is gone; `tombstone` says when it completed and with which result code;
   * `failed`: what it recorded was a failure (as `failed-before` says within the ttl).
   */
  | { kind: 'tombstone'; tombstone: Tombstone; failed: boolean }
  /** The work failed: nothing was recorded, its writes were undone, and the key is free for a retry. */
  | { kind: 'failed'; error: unknown }
  /** The work failed and the failure was recorded as asked (its writes undone): later runs get `failed-before`. */
  | { kind: 'failure-recorded'; error: unknown; durationMs: number }
  /** Lease mode: the lease was taken over before the work finished; the newer holder's outcome stands. */
  | { kind: 'lease-lost' }
  /**
   * The store could not be reached (or the work's own database work failed for the store's sake),
   * the app is shutting down, or the recorded outcome cannot be read: nothing was kept; try again
   * later. With `reason: 'not-migrated'`, the key table does not exist: nothing ran.
   */
  | { kind: 'unavailable'; error: unknown; reason: UnavailableReason };
