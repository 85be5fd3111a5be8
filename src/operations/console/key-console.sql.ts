import type { SqlStatement } from '../../hosts/database-host.js';

/** The columns a console reads of a key's row. */
const ROW = `endpoint, state, encode(fingerprint, 'hex') AS fingerprint, status, created_at, expires_at, locked_until,
       response_expires_at, floor(extract(epoch FROM now() - created_at) * 1000)::bigint AS age_ms,
       (expires_at <= now() AND NOT (state = 'in_progress' AND coalesce(locked_until > now(), false))) AS expired,
       coalesce(state = 'completed' AND completed_at >= created_at AND (response_expires_at <= now() OR response_body IS NULL), false) AS tombstone`;

/** The rows of one key of one caller ($1, $2 as the rows name them), on every endpoint or on $3. */
export const KEY_ROWS: SqlStatement = {
  name: 'nestjs_pg_idempotency_console_key_rows_v2',
  types: ['text', 'text', 'text'],
  whole: true,
  text: `
SELECT ${ROW}
FROM idempotency_keys
WHERE key = $1 AND caller = $2 AND ($3::text IS NULL OR endpoint = $3::text)
ORDER BY created_at`,
};

/** Lease-mode keys in progress since longer than $1 ms, the oldest first, $2 at most. */
export const IN_PROGRESS: SqlStatement = {
  name: 'nestjs_pg_idempotency_console_in_progress_v2',
  types: ['bigint', 'int'],
  whole: true,
  text: `
SELECT key, caller, ${ROW}
FROM idempotency_keys
WHERE state = 'in_progress' AND created_at < now() - $1::bigint * interval '1 millisecond'
ORDER BY created_at
LIMIT $2`,
};

/**
 * Ends one key's row now ($1, $2, $3 as the rows name them): its ttl, and a lease in progress,
 * so that the next request with the key runs. Returns the row as it is now.
 */
export const EXPIRE_KEY: SqlStatement = {
  name: 'nestjs_pg_idempotency_console_expire_v2',
  types: ['text', 'text', 'text'],
  whole: true,
  text: `
UPDATE idempotency_keys
SET expires_at = least(expires_at, now()),
    locked_until = CASE WHEN state = 'in_progress' THEN least(locked_until, now()) ELSE locked_until END
WHERE key = $1 AND caller = $2 AND endpoint = $3
RETURNING ${ROW}`,
};

/** How many rows there are by state, expired or not. */
export const COUNT_BY_STATE: SqlStatement = {
  name: 'nestjs_pg_idempotency_console_counts_v1',
  types: [],
  whole: true,
  text: `
SELECT state, (expires_at <= now() AND NOT (state = 'in_progress' AND coalesce(locked_until > now(), false))) AS expired, count(*)::bigint AS rows
FROM idempotency_keys
GROUP BY 1, 2
ORDER BY 1, 2`,
};
