import type { PreparedStatement } from './combined-statements.js';

/*
 * The statements of the store. Every reservation first takes the scoped key's 64-bit advisory
 * lock ($1) with pg_try_advisory_xact_lock, so that a duplicate in flight is answered at once
 * (409) instead of queueing on an uncommitted row and pinning a pool connection. Every writer
 * of a key's row holds that lock (transactional reservations until their commit, lease
 * reservations for their statement); the sweeper only deletes expired rows.
 */

/** A lease-mode row whose holder's lease still runs: never expired, never swept. */
const LIVE_LEASE = `(k.state = 'in_progress' AND k.locked_until > now())`;

const EXPIRES_AT = `now() + $6::bigint * interval '1 millisecond'`;

/**
 * Whether the row `k` may be taken over by a request whose fingerprint is `fingerprint`: past its
 * ttl, or a lease that ended (same fingerprint). Any other row stands. The one statement of
 * this rule: a lease reservation's ON CONFLICT, KEY_ROW's `takeable` and TAKE_OVER all use it.
 */
function takeable(fingerprint: string): string {
  return `((k.expires_at <= now() AND NOT ${LIVE_LEASE}) OR (k.state = 'in_progress' AND k.locked_until <= now() AND k.fingerprint = ${fingerprint}))`;
}

const TAKEOVER = `
    WHERE ${takeable('EXCLUDED.fingerprint')}`;

/**
 * Transactional mode, first statement: the key's advisory lock, held until the transaction
 * ends. Sent in one message with START TRANSACTION and KEY_ROW, which runs after it with its
 * own snapshot, so it sees a holder that committed (and so released the lock) meanwhile.
 */
export const LOCK_KEY: PreparedStatement = {
  name: 'nestjs_pg_idempotency_lock_v1',
  types: ['bigint'],
  text: `SELECT pg_try_advisory_xact_lock($1::bigint) AS locked`,
};

/**
 * The row of a scoped key, live or not, and what stands in a reservation's way: completed (replay
 * it), under a running lease (409), or `takeable` by this request (expired, or a lease that
 * ended with the same fingerprint). Params: key, caller, endpoint, fingerprint.
 */
export const KEY_ROW: PreparedStatement = {
  name: 'nestjs_pg_idempotency_key_row_v3',
  types: ['varchar', 'text', 'text', 'bytea'],
  text: `
SELECT fingerprint, state, status, response_headers, response_body,
       (expires_at <= now() AND NOT ${LIVE_LEASE}) AS expired,
       coalesce(${takeable('$4')}, false) AS takeable,
       ceil(extract(epoch FROM locked_until - now()))::int AS lease_seconds_left,
       floor(extract(epoch FROM expires_at - now()) * 1000)::bigint AS expires_in_ms
FROM idempotency_keys AS k
WHERE key = $1 AND caller = $2 AND endpoint = $3`,
};

/**
 * Transactional mode, when the key's lock was taken but a takeable row is in the way: deletes it
 * inside the key's transaction (which keeps it row-locked until the commit, so a stale lease
 * holder cannot record over it). Returns one row when it did.
 * Params: key, caller, endpoint, fingerprint.
 */
export const TAKE_OVER: PreparedStatement = {
  name: 'nestjs_pg_idempotency_take_over_v3',
  types: ['varchar', 'text', 'text', 'bytea'],
  text: `
DELETE FROM idempotency_keys AS k
WHERE key = $1 AND caller = $2 AND endpoint = $3
  AND ${takeable('$4')}
RETURNING 1`,
};

/**
 * Transactional mode, last statement before COMMIT: inserts the key row with its outcome. The
 * row is written once, completed: an in-progress row inside the key's own uncommitted
 * transaction would be invisible to every other session anyway; the lock is what others see.
 * A plain INSERT: should a row be in the way after all, it fails, and the handler's writes roll
 * back with it. Params: key, caller, endpoint, fingerprint, status, headers, body, ttl ms ($8).
 */
export const INSERT_OUTCOME: PreparedStatement = {
  name: 'nestjs_pg_idempotency_insert_outcome_v2',
  types: ['varchar', 'text', 'text', 'bytea', 'smallint', 'jsonb', 'bytea', 'bigint'],
  text: `
INSERT INTO idempotency_keys (key, caller, endpoint, fingerprint, state, status, response_headers, response_body, expires_at)
VALUES ($1, $2, $3, $4, 'completed', $5, $6, $7, clock_timestamp() + $8::bigint * interval '1 millisecond')`,
};

/**
 * Lease mode: reserves the key in its own committed statement, with `locked_until` and a
 * fencing token ($7 lease ms, $8 token).
 */
export const RESERVE_LEASE: PreparedStatement = {
  name: 'nestjs_pg_idempotency_reserve_lease_v2',
  types: ['bigint', 'varchar', 'text', 'text', 'bytea', 'bigint', 'bigint', 'bigint'],
  text: `
INSERT INTO idempotency_keys AS k (key, caller, endpoint, fingerprint, locked_until, lease_token, expires_at)
SELECT $2, $3, $4, $5, now() + $7::bigint * interval '1 millisecond', $8::bigint, ${EXPIRES_AT}
WHERE pg_try_advisory_xact_lock($1::bigint)
ON CONFLICT (key, caller, endpoint) DO UPDATE
  SET fingerprint = EXCLUDED.fingerprint, state = 'in_progress', status = NULL,
      response_headers = NULL, response_body = NULL, locked_until = EXCLUDED.locked_until,
      lease_token = EXCLUDED.lease_token, created_at = now(), expires_at = EXCLUDED.expires_at
  ${TAKEOVER}
RETURNING 1`,
};

/** Records a lease holder's outcome, only while the row carries its fencing token. */
export const COMPLETE_LEASE: PreparedStatement = {
  name: 'nestjs_pg_idempotency_complete_lease_v2',
  types: ['varchar', 'text', 'text', 'bigint', 'smallint', 'jsonb', 'bytea', 'bigint'],
  text: `
UPDATE idempotency_keys
SET state = 'completed', status = $5, response_headers = $6, response_body = $7, locked_until = NULL,
    expires_at = clock_timestamp() + $8::bigint * interval '1 millisecond'
WHERE key = $1 AND caller = $2 AND endpoint = $3 AND lease_token = $4::bigint AND state = 'in_progress'`,
};

/**
 * Extends a running lease by $5 ms from now, only while the row carries the holder's fencing
 * token. Safe even once the lease has ended: a takeover's ON CONFLICT … DO UPDATE and this UPDATE
 * serialise on the row, and whichever commits second sees the other's row (the takeover then
 * finds the lease running; the renewal finds another token and updates nothing).
 */
export const RENEW_LEASE: PreparedStatement = {
  name: 'nestjs_pg_idempotency_renew_lease_v1',
  types: ['varchar', 'text', 'text', 'bigint', 'bigint'],
  text: `
UPDATE idempotency_keys SET locked_until = now() + $5::bigint * interval '1 millisecond'
WHERE key = $1 AND caller = $2 AND endpoint = $3 AND lease_token = $4::bigint AND state = 'in_progress'`,
};

/** Frees a leased key, only while the row carries the holder's fencing token. */
export const RELEASE_LEASE: PreparedStatement = {
  name: 'nestjs_pg_idempotency_release_lease_v1',
  types: ['varchar', 'text', 'text', 'bigint'],
  text: `
DELETE FROM idempotency_keys
WHERE key = $1 AND caller = $2 AND endpoint = $3 AND lease_token = $4::bigint AND state = 'in_progress'`,
};

/**
 * Transactional mode: set once the key is reserved (its lock taken, a takeable row deleted), before
 * the handler runs. A handler that throws a deterministic 4xx after it wrote is rolled back to
 * it, and its answer recorded and committed in the same message: the key's lock is never let go
 * before its row exists, so no duplicate can run in between.
 */
export const HANDLER_SAVEPOINT = 'SAVEPOINT nestjs_pg_idempotency_handler';

/** Undoes the handler's writes and keeps what the key's transaction did before it. */
export const ROLLBACK_HANDLER = 'ROLLBACK TO SAVEPOINT nestjs_pg_idempotency_handler';

/** The sweeper's advisory lock, taken by each batch for its own statement: one instance deletes at a time. */
export const SWEEP_LOCK_ID = '7493712083646152801';

/**
 * Deletes one batch of expired rows ($1 at most), if the sweep lock ($2) is free; rows a
 * reservation holds are skipped, never waited on. The lock is transaction-level, taken and let go
 * within this one autocommit statement: it cannot outlive the batch, not even when the
 * connection dies without a word (the server still commits, and lets go), nor change server
 * sessions behind a pooler in transaction mode. Returns `locked` and `deleted`.
 */
export const SWEEP_BATCH = `
WITH sweep_lock AS MATERIALIZED (SELECT pg_try_advisory_xact_lock($2::bigint) AS locked),
swept AS (
  DELETE FROM idempotency_keys
  WHERE (SELECT locked FROM sweep_lock) AND ctid = ANY (ARRAY(
    SELECT ctid FROM idempotency_keys AS k
    WHERE expires_at <= now() AND NOT ${LIVE_LEASE}
    ORDER BY expires_at
    LIMIT $1
    FOR UPDATE SKIP LOCKED
  )) AND expires_at <= now() AND NOT (state = 'in_progress' AND locked_until > now())
  RETURNING 1
)
SELECT (SELECT locked FROM sweep_lock) AS locked, (SELECT count(*) FROM swept)::int AS deleted`;
