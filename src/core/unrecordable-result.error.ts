import { IdempotencyError } from '../idempotency.errors.js';

/**
 * The work returned a result its key cannot record: not JSON data (a `bigint`, a cycle). The
 * work's writes are undone and the key freed, as for any failure of the work; a retry returns the
 * same result and fails the same way, so return JSON data (a `bigint` as a string).
 */
export class UnrecordableResultError extends IdempotencyError {
  constructor(handler: string, cause: unknown) {
    super(
      `${handler} returned a result its key cannot record as JSON (${(cause as Error)?.message ?? String(cause)}): ` +
        'its writes were undone and its key freed; return JSON data (a bigint as a string)',
      { cause },
    );
  }
}
