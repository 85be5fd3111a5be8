import { IdempotencyError } from '../../idempotency.errors.js';

/**
 * A COMMIT that PostgreSQL carried out as a ROLLBACK: a statement had failed inside the
 * transaction (a handler that caught a database error and went on), so nothing of it was kept.
 * PostgreSQL says so with the COMMIT's command tag, not with an error; this error carries the
 * SQLSTATE such a transaction gives any other statement (25P02), so the outcome is answered as
 * the database's refusal.
 */
export class RolledBackAtCommitError extends IdempotencyError {
  readonly code = '25P02';

  constructor() {
    super("COMMIT rolled the key's transaction back: a statement had failed in it, so nothing of it was kept");
  }
}

/** Throws `RolledBackAtCommitError` when `result`, a COMMIT's, says the transaction rolled back. */
export function assertCommitted(result: unknown): void {
  const last = Array.isArray(result) ? result[result.length - 1] : result;
  if ((last as { command?: unknown } | undefined)?.command === 'ROLLBACK') throw new RolledBackAtCommitError();
}
