/**
 * How one delivery of a message ended, for the entry: what the consumer does with the message
 * follows from it (`settlementOf`).
 */
export type MessageOutcome =
  /** First delivery (or the first since the key was free): the handler ran and its outcome was recorded. */
  | { kind: 'executed'; reply: unknown }
  /** A duplicate of a completed key: not run; `reply` is the stored reply (a request-reply pattern answers it). */
  | { kind: 'duplicate'; reply: unknown }
  /** A duplicate of a key that completed longer ago than its ttl, its tombstone kept (`tombstone`): not run, acked; its reply is gone. */
  | { kind: 'tombstone'; completedAt: Date }
  /** A duplicate of a key recorded as failed (a poison message dead-lettered before): not run. */
  | { kind: 'failed-before'; error: string }
  /** The key is held by another delivery right now: neither run nor acked. */
  | { kind: 'held' }
  /** The handler failed: the key is free again, and the message is delivered again (attempt < maxAttempts). */
  | { kind: 'retry'; error: unknown }
  /** The handler failed its last attempt: recorded as failed (its writes undone), the message dead-lettered. */
  | { kind: 'dead'; error: unknown }
  /** The key came with another payload than the one it was recorded with: not run. */
  | { kind: 'mismatch' }
  /** The message cannot be de-duplicated (no key, a key too long, a payload that is not JSON): not run, nothing written. */
  | { kind: 'malformed'; why: string }
  /** The key store could not be reached: not run; the message is delivered again. */
  | { kind: 'unavailable'; error: unknown };

/**
 * What the consumer does with the message: `ack` it (its outcome is recorded: the broker may
 * forget it), `requeue` it after the handler's `retryDelay` (nothing was recorded; it must run,
 * or be answered, later), or `dead-letter` it (it must not loop: the broker's dead-letter
 * exchange or the stream's advisory keeps it for a person to look at).
 */
export type Settlement = 'ack' | 'requeue' | 'dead-letter';

export function settlementOf(outcome: MessageOutcome): Settlement {
  switch (outcome.kind) {
    case 'executed':
    case 'duplicate':
    case 'tombstone':
    case 'failed-before':
      return 'ack';
    case 'held':
    case 'retry':
    case 'unavailable':
      return 'requeue';
    case 'dead':
    case 'mismatch':
    case 'malformed':
      return 'dead-letter';
  }
}
