/*
 * The statements of the store. `$1` is always the 64-bit advisory-lock id of the scoped key:
 * a reservation takes it with pg_try_advisory_xact_lock, so a duplicate in flight is answered
 * at once (409) instead of queueing on the uncommitted row and pinning a pool connection.
 */

const EXPIRES_AT = `now() + $6::bigint * interval '1 millisecond'`;

/**
 * Look up a live row; only when there is none, try the lock and insert (or take over an
 * expired row). Replays take no lock, so concurrent replays never answer 409.
 * Params: lock id, key, caller, endpoint, fingerprint, ttl ms.
 */
export const RESERVE = `
WITH existing AS (
  SELECT fingerprint, state, status, response_headers, response_body
  FROM idempotency_keys
  WHERE key = $2 AND caller = $3 AND endpoint = $4 AND expires_at > now()
), lock AS (
  SELECT pg_try_advisory_xact_lock($1::bigint) AS acquired
  WHERE NOT EXISTS (SELECT 1 FROM existing)
), reserved AS (
  INSERT INTO idempotency_keys AS k (key, caller, endpoint, fingerprint, expires_at)
  SELECT $2, $3, $4, $5, ${EXPIRES_AT} FROM lock WHERE lock.acquired
  ON CONFLICT (key, caller, endpoint) DO UPDATE
    SET fingerprint = EXCLUDED.fingerprint, state = 'in_progress', status = NULL,
        response_headers = NULL, response_body = NULL, locked_until = NULL, lease_token = NULL,
        created_at = now(), expires_at = EXCLUDED.expires_at
    WHERE k.expires_at <= now()
  RETURNING 1
)
SELECT (SELECT acquired FROM lock) AS acquired,
       EXISTS (SELECT 1 FROM reserved) AS reserved,
       e.fingerprint, e.state, e.status, e.response_headers, e.response_body
FROM (VALUES (1)) AS one (n) LEFT JOIN existing e ON true`;

/** Records the outcome on the reserved row, inside the reserving transaction. */
export const COMPLETE = `
UPDATE idempotency_keys
SET state = 'completed', status = $4, response_headers = $5, response_body = $6
WHERE key = $1 AND caller = $2 AND endpoint = $3`;

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
  WHERE k.expires_at <= now()`;

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
