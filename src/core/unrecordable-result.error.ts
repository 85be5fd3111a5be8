import { IdempotencyError } from '../idempotency.errors.js';

/**
 * The work returned a result its key cannot record: not JSON data (a `bigint`, a cycle). It is a
 * failure of the work's: in transactional mode its writes are undone and its key freed (a retry
 * returns the same result and fails the same way); in lease mode, whose effects outside the
 * database happened, the failure is recorded, so that no retry runs them again. Return JSON data
 * (a `bigint` as a string).
 */
export class UnrecordableResultError extends IdempotencyError {
  constructor(handler: string, cause: unknown) {
    super(
      `${handler} returned a result its key cannot record as JSON (${(cause as Error)?.message ?? String(cause)}): ` +
        'return JSON data (a bigint as a string)',
      { cause },
    );
  }
}
