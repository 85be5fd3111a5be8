import type { SqlStatement } from '../../hosts/database-host.js';
import { takeable } from './key-table.sql.js';

/** The columns a recording writes, in `KEPT_UNTIL`'s order at the end. */
const RECORDED_COLUMNS =
  'key, caller, endpoint, fingerprint, state, status, response_headers, response_body, expires_at, response_expires_at, completed_at';

/**
 * `expires_at`, `response_expires_at` and `completed_at` of a key completed now, with the ttl
 * `ttl` (ms) and the tombstone `tombstone` (ms, NULL for none): without a tombstone the row and
 * its response go at the ttl's end; with one, the response goes then, and the row (that the key
 * completed, when and with which status) at the tombstone's end, counted from the completion.
 */
function KEPT_UNTIL(ttl: string, tombstone: string): string {
  return `clock_timestamp() + coalesce(${tombstone}::bigint, ${ttl}::bigint) * interval '1 millisecond',
    CASE WHEN ${tombstone}::bigint IS NULL THEN NULL ELSE clock_timestamp() + ${ttl}::bigint * interval '1 millisecond' END,
    CASE WHEN ${tombstone}::bigint IS NULL THEN NULL ELSE clock_timestamp() END`;
}

/**
 * Transactional mode, last statement before COMMIT: writes the key's row with its outcome,
 * `INSERT … ON CONFLICT`, taking over in the same statement a row that is in the way and
 * `takeable` (an expired one, which the reservation found). The row is written once, completed:
 * an in-progress row inside the key's own uncommitted transaction would be invisible to every
 * other session anyway; the lock is what others see. A row in the way that is not takeable
 * writes nothing, and then the statement fails (a division by zero over the empty result), so
 * that the transaction never commits the handler's writes without its key's row: the unique key,
 * not only the lock, guards exactly-once. Params: key, caller, endpoint, fingerprint, status,
 * headers, body, ttl ms ($8), tombstone ms ($9: NULL for none; see `KEPT_UNTIL`).
 */
export const RECORD_OUTCOME: SqlStatement = {
  name: 'nestjs_pg_idempotency_record_outcome_v2',
  types: ['varchar', 'text', 'text', 'bytea', 'smallint', 'jsonb', 'bytea', 'bigint', 'bigint'],
  text: `
WITH recorded AS (
  INSERT INTO idempotency_keys AS k (${RECORDED_COLUMNS})
  VALUES ($1, $2, $3, $4, 'completed', $5, $6, $7, ${KEPT_UNTIL('$8', '$9')})
  ON CONFLICT (key, caller, endpoint) DO UPDATE
    SET fingerprint = EXCLUDED.fingerprint, state = 'completed', status = EXCLUDED.status,
        response_headers = EXCLUDED.response_headers, response_body = EXCLUDED.response_body,
        locked_until = NULL, lease_token = NULL, created_at = now(), expires_at = EXCLUDED.expires_at,
        response_expires_at = EXCLUDED.response_expires_at, completed_at = EXCLUDED.completed_at
    WHERE ${takeable('EXCLUDED.fingerprint')}
  RETURNING 1
)
SELECT 1 / count(*)::int AS recorded FROM recorded`,
};

/**
 * The partitioned table's recording, after the key's lock: the key's row inserted unless a row of
 * the key stands in the way (not `takeable`), then a division by zero when nothing was written.
 */
const RECORDED_UNLESS_STANDING = `recorded AS (
  INSERT INTO idempotency_keys (${RECORDED_COLUMNS})
  SELECT $1, $2, $3, $4, 'completed', $5, $6, $7, ${KEPT_UNTIL('$8', '$9')}
  WHERE NOT EXISTS (
    SELECT 1 FROM idempotency_keys AS k
    WHERE key = $1 AND caller = $2 AND endpoint = $3 AND NOT coalesce(${takeable('$4')}, false)
  )
  RETURNING 1
)
SELECT 1 / count(*)::int AS recorded FROM recorded`;

/**
 * `RECORD_OUTCOME` on the partitioned table (`idempotency-keys-partitioned.schema.ts`), whose
 * unique key holds `expires_at` and so serves no `ON CONFLICT` on the scoped key: deletes a row
 * in the way that is `takeable` and inserts the key's row, unless a row in the way stands; then,
 * as `RECORD_OUTCOME`, fails (a division by zero) when it wrote nothing. Sent after the key's
 * lock, with a snapshot of its own: no other writer of the key can commit meanwhile, so the
 * lookup is the uniqueness check. Same params.
 */
export const RECORD_OUTCOME_PARTITIONED: SqlStatement = {
  name: 'nestjs_pg_idempotency_record_outcome_partitioned_v2',
  types: RECORD_OUTCOME.types,
  text: `
WITH replaced AS (
  DELETE FROM idempotency_keys AS k
  WHERE key = $1 AND caller = $2 AND endpoint = $3 AND coalesce(${takeable('$4')}, false)
),
${RECORDED_UNLESS_STANDING}`,
};

/**
 * `RECORD_OUTCOME_PARTITIONED` for a key whose reservation found no row: with the key's lock held
 * since that lookup, no writer of the module can have added one (every writer that creates a
 * key's row holds its lock), so there is nothing to take over and no `DELETE` to plan across the
 * partitions; the insert still checks that no row stands in the way, and fails (a division by
 * zero) when one does. Same params.
 */
export const RECORD_FRESH_OUTCOME_PARTITIONED: SqlStatement = {
  name: 'nestjs_pg_idempotency_record_fresh_outcome_partitioned_v2',
  types: RECORD_OUTCOME.types,
  text: `
WITH ${RECORDED_UNLESS_STANDING}`,
};

/**
 * Records a lease holder's outcome, only while the row carries its fencing token. Params: key,
 * caller, endpoint, token, status, headers, body, ttl ms, tombstone ms (NULL for none).
 */
export const COMPLETE_LEASE: SqlStatement = {
  name: 'nestjs_pg_idempotency_complete_lease_v3',
  types: ['varchar', 'text', 'text', 'bigint', 'smallint', 'jsonb', 'bytea', 'bigint', 'bigint'],
  text: `
UPDATE idempotency_keys
SET state = 'completed', status = $5, response_headers = $6, response_body = $7, locked_until = NULL,
    (expires_at, response_expires_at, completed_at) = (SELECT ${KEPT_UNTIL('$8', '$9')})
WHERE key = $1 AND caller = $2 AND endpoint = $3 AND lease_token = $4::bigint AND state = 'in_progress'`,
};

/**
 * Extends a running lease by $5 ms from now, only while the row carries the holder's fencing
 * token. Safe even once the lease has ended: a takeover's ON CONFLICT … DO UPDATE and this UPDATE
 * serialise on the row, and whichever commits second sees the other's row (the takeover then
 * finds the lease running; the renewal finds another token and updates nothing).
 */
export const RENEW_LEASE: SqlStatement = {
  name: 'nestjs_pg_idempotency_renew_lease_v1',
  types: ['varchar', 'text', 'text', 'bigint', 'bigint'],
  text: `
UPDATE idempotency_keys SET locked_until = now() + $5::bigint * interval '1 millisecond'
WHERE key = $1 AND caller = $2 AND endpoint = $3 AND lease_token = $4::bigint AND state = 'in_progress'`,
};

/** Frees a leased key, only while the row carries the holder's fencing token. */
export const RELEASE_LEASE: SqlStatement = {
  name: 'nestjs_pg_idempotency_release_lease_v1',
  types: ['varchar', 'text', 'text', 'bigint'],
  text: `
DELETE FROM idempotency_keys
WHERE key = $1 AND caller = $2 AND endpoint = $3 AND lease_token = $4::bigint AND state = 'in_progress'`,
};
