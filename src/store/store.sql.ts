/*
 * The statements of the store. `$1` is always the 64-bit advisory-lock id of the scoped key: a
 * reservation takes it with pg_try_advisory_xact_lock, so a duplicate in flight is answered at
 * once (409) instead of queueing on an uncommitted row and pinning a pool connection.
 * Reservation params: lock id, key, caller, endpoint, fingerprint, ttl ms (then lease ms, token).
 */

const EXPIRES_AT = `now() + $6::bigint * interval '1 millisecond'`;

/**
 * The live row of the scoped key, if any, and the advisory lock, taken only when there is no
 * live row standing in the way: a completed row is replayed and a row under a running lease
 * answers 409, without any lock, so concurrent replays never answer 409.
 */
const EXISTING_AND_LOCK = `
existing AS (
  SELECT fingerprint, state, status, response_headers, response_body,
         ceil(extract(epoch FROM locked_until - now()))::int AS lease_seconds_left,
         floor(extract(epoch FROM expires_at - now()) * 1000)::bigint AS expires_in_ms
  FROM idempotency_keys
  WHERE key = $2 AND caller = $3 AND endpoint = $4 AND expires_at > now()
), lock AS (
  SELECT pg_try_advisory_xact_lock($1::bigint) AS acquired
  WHERE NOT EXISTS (
    SELECT 1 FROM existing e
    WHERE e.state = 'completed' OR e.lease_seconds_left > 0 OR e.fingerprint <> $5
  )
)`;

/** Which conflicting row a reservation takes over: past its ttl, or a lease that ended. */
const TAKEOVER = `
    WHERE k.expires_at <= now()
       OR (k.state = 'in_progress' AND k.locked_until <= now() AND k.fingerprint = EXCLUDED.fingerprint)`;

const RESULT = `
SELECT (SELECT acquired FROM lock) AS acquired,
       EXISTS (SELECT 1 FROM reserved) AS reserved,
       e.fingerprint, e.state, e.status, e.response_headers, e.response_body, e.lease_seconds_left, e.expires_in_ms
FROM (VALUES (1)) AS one (n) LEFT JOIN existing e ON true`;

/** Transactional mode: inserts the key inside the transaction that runs the handler. */
export const RESERVE = `
WITH ${EXISTING_AND_LOCK}, reserved AS (
  INSERT INTO idempotency_keys AS k (key, caller, endpoint, fingerprint, expires_at)
  SELECT $2, $3, $4, $5, ${EXPIRES_AT} FROM lock WHERE lock.acquired
  ON CONFLICT (key, caller, endpoint) DO UPDATE
    SET fingerprint = EXCLUDED.fingerprint, state = 'in_progress', status = NULL,
        response_headers = NULL, response_body = NULL, locked_until = NULL, lease_token = NULL,
        created_at = now(), expires_at = EXCLUDED.expires_at
    ${TAKEOVER}
  RETURNING 1
)
${RESULT}`;

/**
 * Lease mode: reserves the key in its own committed statement, with `locked_until` and a
 * fencing token ($7 lease ms, $8 token).
 */
export const RESERVE_LEASE = `
WITH ${EXISTING_AND_LOCK}, reserved AS (
  INSERT INTO idempotency_keys AS k (key, caller, endpoint, fingerprint, locked_until, lease_token, expires_at)
  SELECT $2, $3, $4, $5, now() + $7::bigint * interval '1 millisecond', $8::bigint, ${EXPIRES_AT}
  FROM lock WHERE lock.acquired
  ON CONFLICT (key, caller, endpoint) DO UPDATE
    SET fingerprint = EXCLUDED.fingerprint, state = 'in_progress', status = NULL,
        response_headers = NULL, response_body = NULL, locked_until = EXCLUDED.locked_until,
        lease_token = EXCLUDED.lease_token, created_at = now(), expires_at = EXCLUDED.expires_at
    ${TAKEOVER}
  RETURNING 1
)
${RESULT}`;

/** Records the outcome on the reserved row, inside the reserving transaction. */
export const COMPLETE = `
UPDATE idempotency_keys
SET state = 'completed', status = $4, response_headers = $5, response_body = $6
WHERE key = $1 AND caller = $2 AND endpoint = $3`;

/** Records a lease holder's outcome, only while the row carries its fencing token. */
export const COMPLETE_LEASE = `
UPDATE idempotency_keys
SET state = 'completed', status = $5, response_headers = $6, response_body = $7, locked_until = NULL
WHERE key = $1 AND caller = $2 AND endpoint = $3 AND lease_token = $4::bigint AND state = 'in_progress'`;

/** Frees a leased key, only while the row carries the holder's fencing token. */
export const RELEASE_LEASE = `
DELETE FROM idempotency_keys
WHERE key = $1 AND caller = $2 AND endpoint = $3 AND lease_token = $4::bigint AND state = 'in_progress'`;

/**
 * Records an outcome in its own short transaction (after the handler's transaction was rolled
 * back). Skips, never waits, when another request holds the key meanwhile.
 * Params: lock id, key, caller, endpoint, fingerprint, ttl ms, status, headers, body.
 */
export const RECORD = `
WITH lock AS (SELECT pg_try_advisory_xact_lock($1::bigint) AS acquired)
INSERT INTO idempotency_keys AS k
  (key, caller, endpoint, fingerprint, state, status, response_headers, response_body, expires_at)
SELECT $2, $3, $4, $5, 'completed', $7, $8, $9, ${EXPIRES_AT} FROM lock WHERE lock.acquired
ON CONFLICT (key, caller, endpoint) DO UPDATE
  SET fingerprint = EXCLUDED.fingerprint, state = 'completed', status = EXCLUDED.status,
      response_headers = EXCLUDED.response_headers, response_body = EXCLUDED.response_body,
      locked_until = NULL, lease_token = NULL, created_at = now(), expires_at = EXCLUDED.expires_at
  WHERE k.expires_at <= now()
RETURNING 1`;

/** The sweeper's advisory lock, held for a whole run: one instance sweeps at a time. */
export const SWEEP_LOCK_ID = '7493712083646152801';

/** Deletes one batch of expired rows; rows a reservation holds are skipped, never waited on. */
export const SWEEP_BATCH = `
DELETE FROM idempotency_keys
WHERE ctid = ANY (ARRAY(
  SELECT ctid FROM idempotency_keys
  WHERE expires_at <= now()
  ORDER BY expires_at
  LIMIT $1
  FOR UPDATE SKIP LOCKED
)) AND expires_at <= now()`;
