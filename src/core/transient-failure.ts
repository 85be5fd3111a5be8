import { type DatabaseFailure, DatabaseUnavailableError, LostRaceError } from '../hosts/database-failures.js';

/**
 * Whether a failure the work met is the store's, not the work's: the database unavailable, or a
 * race lost (a serialization failure, a deadlock). Its writes are undone and its key freed, and it
 * is never recorded nor counted as an attempt: a retry runs it again.
 */
export function isTransientFailure(failure: DatabaseFailure | undefined): boolean {
  return failure instanceof DatabaseUnavailableError || failure instanceof LostRaceError;
}
