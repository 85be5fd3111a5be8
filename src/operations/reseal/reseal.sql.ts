import type { SqlStatement } from '../../hosts/database-host.js';

/**
 * One batch of completed rows whose outcome is not sealed with the current key ($1): in clear,
 * or sealed with another (a tombstone whose answer was dropped holds none). Read in primary-key order after the previous batch's last row ($3,
 * $4, $5; NULLs for the first), so a row that cannot be resealed is passed, never read again
 * in the same run. $2 rows at most.
 */
export const UNSEALED_BATCH: SqlStatement = {
  name: 'nestjs_pg_idempotency_unsealed_batch_v2',
  types: ['text', 'int', 'text', 'text', 'text'],
  whole: true,
  text: `
SELECT key, caller, endpoint, fingerprint, status, response_headers, response_body
FROM idempotency_keys
WHERE state = 'completed' AND status IS NOT NULL AND response_body IS NOT NULL
  AND (jsonb_typeof(response_headers) IS DISTINCT FROM 'object' OR response_headers->>'sealedWith' IS DISTINCT FROM $1)
  AND ($3::text IS NULL OR (key, caller, endpoint) > ($3::text, $4::text, $5::text))
ORDER BY key, caller, endpoint
LIMIT $2`,
};

/**
 * Writes a batch of resealed outcomes ($1: a JSON array of `{ key, caller, endpoint, headers,
 * body, was }`, the bodies in hex), each only where its row still holds the outcome that was read
 * (`was`): a row taken over or swept meanwhile is left as it is. Returns the number written.
 */
export const RESEAL_BATCH: SqlStatement = {
  name: 'nestjs_pg_idempotency_reseal_batch_v1',
  types: ['jsonb'],
  whole: true,
  text: `
WITH resealed AS (
  UPDATE idempotency_keys AS k
  SET response_headers = u.headers, response_body = decode(u.body, 'hex')
  FROM jsonb_to_recordset($1::jsonb) AS u(key text, caller text, endpoint text, headers jsonb, body text, was text)
  WHERE k.key = u.key AND k.caller = u.caller AND k.endpoint = u.endpoint
    AND k.state = 'completed' AND k.response_body = decode(u.was, 'hex')
  RETURNING 1
)
SELECT count(*)::int AS resealed FROM resealed`,
};
