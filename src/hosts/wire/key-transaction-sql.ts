/*
 * The commands that frame a key transaction on PostgreSQL, shared by the adapters over
 * node-postgres.
 */

/**
 * Starts the key's transaction at READ COMMITTED whatever the server's default, so that each
 * statement of the opening message runs with its own snapshot: the key's row is read after its
 * lock was taken, never from a snapshot older than the lock.
 */
export const START_KEY_TRANSACTION = 'START TRANSACTION ISOLATION LEVEL READ COMMITTED';

/** READ COMMITTED for a transaction started by someone else (its first command). */
export const READ_COMMITTED = 'SET TRANSACTION ISOLATION LEVEL READ COMMITTED';

/**
 * Set once the key is reserved, before the handler runs. A handler that throws a deterministic
 * 4xx after it wrote is rolled back to it, and its answer recorded and committed in the same
 * message: the key's lock is never let go before its row exists, so no duplicate can run in
 * between.
 */
export const HANDLER_SAVEPOINT = 'SAVEPOINT nestjs_pg_idempotency_handler';

/** Undoes the handler's writes and keeps what the key's transaction did before it. */
export const ROLLBACK_HANDLER = 'ROLLBACK TO SAVEPOINT nestjs_pg_idempotency_handler';
