import type { SqlStatement } from '../../hosts/database-host.js';
import { EXPIRED, takeable, TOMBSTONE } from './key-table.sql.js';

/**
 * Transactional mode, first statement: the key's advisory lock, held until the transaction
 * ends. Sent in one message with START TRANSACTION and KEY_ROW, which runs after it with its
 * own snapshot, so it sees a holder that committed (and so released the lock) meanwhile.
 */
export const LOCK_KEY: SqlStatement = {
  name: 'nestjs_pg_idempotency_lock_v1',
  types: ['bigint'],
  text: `SELECT pg_try_advisory_xact_lock($1::bigint) AS locked`,
};

/**
 * The row of a scoped key, live or not, and what stands in a reservation's way: completed (replay
 * it, or, past its ttl, answer its `tombstone`), under a running lease (409), or `takeable` by
 * this request (expired, or a lease that ended with the same fingerprint); `expires_in_ms` is how
 * long its response is kept. Params: key, caller, endpoint, fingerprint.
 */
export const KEY_ROW: SqlStatement = {
  name: 'nestjs_pg_idempotency_key_row_v6',
  types: ['varchar', 'text', 'text', 'bytea'],
  text: `
SELECT fingerprint, state, status, response_headers, response_body,
       ${EXPIRED} AS expired,
       coalesce(${takeable('$4')}, false) AS takeable,
       coalesce(${TOMBSTONE}, false) AS tombstone,
       ceil(extract(epoch FROM locked_until - now()))::int AS lease_seconds_left,
       floor(extract(epoch FROM coalesce(response_expires_at, expires_at) - now()) * 1000)::bigint AS expires_in_ms,
       floor(extract(epoch FROM expires_at) * 1000)::bigint AS expires_at_ms,
       floor(extract(epoch FROM response_expires_at) * 1000)::bigint AS response_expired_at_ms,
       floor(extract(epoch FROM completed_at) * 1000)::bigint AS completed_at_ms
FROM idempotency_keys AS k
WHERE key = $1 AND caller = $2 AND endpoint = $3`,
};

/**
 * Transactional mode, when the key's lock was taken and a lease's row is in the way (an ended
 * lease, or an expired one): deletes it inside the key's transaction, which keeps it row-locked
 * until the commit, so that its stale holder can no longer record over it nor renew it. (An
 * expired completed row needs no such fence: nobody but the sweeper writes it, and the key's
 * row takes it over at the commit.) Returns one row when it did.
 * Params: key, caller, endpoint, fingerprint.
 */
export const FENCE_LEASE: SqlStatement = {
  name: 'nestjs_pg_idempotency_fence_lease_v1',
  types: ['varchar', 'text', 'text', 'bytea'],
  text: `
DELETE FROM idempotency_keys AS k
WHERE key = $1 AND caller = $2 AND endpoint = $3
  AND k.state = 'in_progress' AND ${takeable('$4')}
RETURNING 1`,
};

/**
 * Lease mode: reserves the key in its own committed statement, with `locked_until` and a
 * fencing token. Params: lock id, key, caller, endpoint, fingerprint, ttl ms, lease ms, token.
 */
export const RESERVE_LEASE: SqlStatement = {
  name: 'nestjs_pg_idempotency_reserve_lease_v3',
  types: ['bigint', 'varchar', 'text', 'text', 'bytea', 'bigint', 'bigint', 'bigint'],
  text: `
INSERT INTO idempotency_keys AS k (key, caller, endpoint, fingerprint, locked_until, lease_token, expires_at)
SELECT $2, $3, $4, $5, now() + $7::bigint * interval '1 millisecond', $8::bigint, now() + $6::bigint * interval '1 millisecond'
WHERE pg_try_advisory_xact_lock($1::bigint)
ON CONFLICT (key, caller, endpoint) DO UPDATE
  SET fingerprint = EXCLUDED.fingerprint, state = 'in_progress', status = NULL,
      response_headers = NULL, response_body = NULL, locked_until = EXCLUDED.locked_until,
      lease_token = EXCLUDED.lease_token, created_at = now(), expires_at = EXCLUDED.expires_at,
      response_expires_at = NULL, completed_at = NULL
  WHERE ${takeable('EXCLUDED.fingerprint')}
RETURNING 1`,
};

/**
 * Lease mode on the partitioned table, first of two statements sent in one message (one implicit
 * transaction): the key's advisory lock, held until that transaction ends, or a failure (a
 * division by zero) that skips the second statement when another request holds it.
 */
export const LOCK_KEY_OR_FAIL: SqlStatement = {
  name: 'nestjs_pg_idempotency_lock_or_fail_v1',
  types: ['bigint'],
  text: `SELECT 1 / pg_try_advisory_xact_lock($1::bigint)::int AS locked`,
};

/**
 * Lease mode on the partitioned table, second statement, after `LOCK_KEY_OR_FAIL` and with a
 * snapshot of its own (so it sees a holder that committed before the lock was taken): as
 * `RESERVE_LEASE`, deleting a `takeable` row in the way instead of updating it, and writing
 * nothing when a row in the way stands. Params: key, caller, endpoint, fingerprint, ttl ms,
 * lease ms, token.
 */
export const RESERVE_LEASE_PARTITIONED: SqlStatement = {
  name: 'nestjs_pg_idempotency_reserve_lease_partitioned_v1',
  types: ['varchar', 'text', 'text', 'bytea', 'bigint', 'bigint', 'bigint'],
  text: `
WITH replaced AS (
  DELETE FROM idempotency_keys AS k
  WHERE key = $1 AND caller = $2 AND endpoint = $3 AND coalesce(${takeable('$4')}, false)
)
INSERT INTO idempotency_keys (key, caller, endpoint, fingerprint, locked_until, lease_token, expires_at)
SELECT $1, $2, $3, $4, now() + $6::bigint * interval '1 millisecond', $7::bigint, now() + $5::bigint * interval '1 millisecond'
WHERE NOT EXISTS (
  SELECT 1 FROM idempotency_keys AS k
  WHERE key = $1 AND caller = $2 AND endpoint = $3 AND NOT coalesce(${takeable('$4')}, false)
)
RETURNING 1`,
};
