import type { Recording } from '../../core/held-run.js';

/**
 * What to do with an HTTP run's outcome: two pure functions, from what happened to what to do, so
 * that every case stands in one table (test/unit/outcome-decision.spec.ts). The core carries the
 * decision out (`HeldRun.conclude()`).
 */

/**
 * When the response that reached its end was answered, relative to the handler: `after-handler`
 * (the usual: the platform sent what the handler returned or threw, after it settled),
 * `self-sent` (the handler sent it itself, `@Res({ passthrough: true })`, before it settled: it
 * is held until the outcome is concluded), `early` (someone else answered before the handler
 * settled, an outer interceptor's fallback: it has left already).
 */
export type Answer = 'after-handler' | 'self-sent' | 'early';

/** What happened: how the handler ended and what the client was answered. */
export interface Outcome {
  answer: Answer;
  handlerFailed: boolean;
  /** The status code of the answer. */
  status: number;
  /** Whether the route's failure policy stores that status. */
  storable: boolean;
  /** Whether the body fits the route's `maxResponseBytes`. */
  fits: boolean;
}

/** A problem sent in place of the app's answer. */
export type Replacement =
  'failed-after-answer' | 'too-large' | 'lease-taken-over' | 'outcome-refused' | 'store-unavailable';

/** Why a key was released without a recorded outcome (the `released` event's reason). */
export type ReleaseReason = 'not-stored' | 'failed';

export type Decision =
  /** Record the answer and commit; with `rollbackWrites`, the handler's writes are undone first. */
  | { action: 'record'; rollbackWrites: boolean }
  /**
   * Free the key without recording: commit the handler's writes (`keepWrites`) or roll them back;
   * `status` is what the released event reports; `replaceWith` a problem sent instead of the answer.
   */
  | {
      action: 'release';
      keepWrites: boolean;
      reason: ReleaseReason;
      status: number;
      replaceWith?: Extract<Replacement, 'failed-after-answer' | 'too-large'>;
    };

/**
 * - A handler that failed after someone else answered early: its writes roll back and the key
 *   is freed (an answer recorded over them would claim what never happened; the answer has left).
 * - A handler that failed after answering by itself: that answer is withdrawn (it may claim
 *   writes that were rolled back) and a 500 sent instead; the key is freed.
 * - An answer the policy does not store frees the key; a success keeps its writes (the client
 *   was told they happened), a failure's roll back. A retry runs the request again.
 * - A stored answer too large to record is not sent: the key is freed, its writes roll back, and a
 *   500 goes out instead (sending it unrecorded would let a retry run the handler again).
 * - Anything else is recorded: a thrown (deterministic) 4xx with its writes rolled back.
 */
export function decide({ answer, handlerFailed, status, storable, fits }: Outcome): Decision {
  if (handlerFailed && answer === 'early') return { action: 'release', keepWrites: false, reason: 'failed', status };
  if (handlerFailed && answer === 'self-sent') {
    return {
      action: 'release',
      keepWrites: false,
      reason: 'not-stored',
      status: 500,
      replaceWith: 'failed-after-answer',
    };
  }
  if (!storable) return { action: 'release', keepWrites: status < 400 && !handlerFailed, reason: 'not-stored', status };
  if (!fits) return { action: 'release', keepWrites: false, reason: 'failed', status, replaceWith: 'too-large' };
  return { action: 'record', rollbackWrites: handlerFailed };
}

/**
 * The problem sent in place of the app's answer once recording ended:
 * - recorded: none, the run executed;
 * - lost (a lease taken over before its holder finished): nothing recorded, the newer holder's
 *   outcome stands; the client gets a 409, whose retry gets that outcome;
 * - failed: the key is freed; a transaction PostgreSQL refused fails the same way on a retry (a
 *   500 `outcome-not-recorded`), anything else is a 503 to retry later.
 */
export function replacementAfter(
  recording: Recording,
): Exclude<Replacement, 'failed-after-answer' | 'too-large'> | undefined {
  switch (recording.kind) {
    case 'recorded':
    case 'skipped':
      return undefined;
    case 'lost':
      return 'lease-taken-over';
    case 'failed':
      return recording.refused ? 'outcome-refused' : 'store-unavailable';
  }
}
