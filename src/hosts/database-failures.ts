import { IdempotencyError } from '../idempotency.errors.js';

/**
 * What a database host reports of a failure that came from the database or its driver, whatever
 * the driver's own error looks like: the adapter that caught it translates it into one of these,
 * with the driver's error as `cause` and the SQLSTATE when PostgreSQL gave one. The stages read
 * only these classes.
 */
export abstract class DatabaseFailure extends IdempotencyError {
  constructor(
    override readonly cause: unknown,
    /** PostgreSQL's SQLSTATE, when the failure carries one. */
    readonly sqlState: string | undefined,
  ) {
    super(
      (cause as { message?: unknown })?.message !== undefined
        ? String((cause as { message: unknown }).message)
        : String(cause),
      { cause },
    );
  }
}

/**
 * The database is unreachable, overloaded, timed out or shutting down, or the server session
 * changed under the connection: retry later (503).
 */
export class DatabaseUnavailableError extends DatabaseFailure {}

/** A serialization failure or a deadlock (40001, 40P01): the transaction lost a race, and a retry may not (503). */
export class LostRaceError extends DatabaseFailure {}

/**
 * PostgreSQL refused the statement for what it is (a constraint checked at COMMIT, a transaction
 * already aborted by a failed statement, a division by zero a statement of the module's uses as
 * its signal): a retry meets the same refusal.
 */
export class RefusedByDatabaseError extends DatabaseFailure {}
