import { IdempotencyError } from '../idempotency.errors.js';

/** The `extensions.code` of each refusal an `@Idempotent()` mutation answers with. */
export type MutationErrorCode =
  /** No key was sent to a mutation that requires one. */
  | 'IDEMPOTENCY_KEY_MISSING'
  /** The key is malformed, too long, or outside the accepted format. */
  | 'IDEMPOTENCY_KEY_INVALID'
  /** The request has no caller and the module refuses unidentified callers. */
  | 'UNAUTHENTICATED'
  /** Another request with the key is running the mutation: retry after `retryAfterSeconds`. */
  | 'IDEMPOTENCY_CONCURRENT_REQUEST'
  /** The key was used with other arguments: it is never answered with a result that was for them. */
  | 'IDEMPOTENCY_KEY_PARAMETER_MISMATCH'
  /** The key completed longer ago than its ttl and its tombstone is kept (`tombstone`): nothing ran, its result is gone. */
  | 'IDEMPOTENCY_KEY_EXPIRED'
  /** Lease mode: the lease was taken over before the mutation finished; the newer holder's outcome stands. */
  | 'IDEMPOTENCY_LEASE_TAKEN_OVER'
  /** The store is unavailable or the app is shutting down: nothing ran or was kept; retry after `retryAfterSeconds`. */
  | 'IDEMPOTENCY_UNAVAILABLE'
  /** The key table does not exist (a migration not run): nothing ran, and no retry helps until it does. */
  | 'IDEMPOTENCY_STORE_NOT_MIGRATED';

/**
 * What an `@Idempotent()` mutation answers instead of running: a GraphQL error of that field
 * (graphql-js copies `extensions` into the response's error), with a stable `extensions.code`
 * and, where a retry is the fix, `extensions.retryAfterSeconds`. The entry returns it as the
 * field's value (graphql-js answers a returned Error as the field's error), so Nest does not log
 * it as an exception of the app's.
 */
export class IdempotentMutationError extends IdempotencyError {
  readonly extensions: { readonly code: MutationErrorCode; readonly retryAfterSeconds?: number };

  constructor(code: MutationErrorCode, message: string, retryAfterSeconds?: number, options?: { cause?: unknown }) {
    super(message, options);
    this.extensions = retryAfterSeconds === undefined ? { code } : { code, retryAfterSeconds };
  }
}
