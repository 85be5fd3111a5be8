import type { SqlStatement } from '../../hosts/database-host.js';
import { EXPIRED, TOMBSTONE } from '../../store/table/key-table.sql.js';

/** The sweeper's advisory lock, taken by each batch for its own statement: one instance deletes at a time. */
export const SWEEP_LOCK_ID = '7493712083646152801';

/**
 * Deletes one batch of expired rows ($1 at most), if the sweep lock ($2) is free; rows a
 * reservation holds are skipped, never waited on. $3: where the run's previous batch ended (its
 * `last` expiry, or NULL): the batch reads the expiry index from there, not from its start, where
 * the rows earlier batches deleted still have their index entries until vacuum (each batch
 * stepping over all of them would make a sweep's time grow with the square of its rows). A row
 * before that point that a reservation held is left to the next run. The lock is transaction-level, taken and let go
 * within this one autocommit statement: it cannot outlive the batch, not even when the
 * connection dies without a word (the server still commits, and lets go), nor change server
 * sessions behind a pooler in transaction mode. Returns `locked`, `deleted` and `last` (the
 * latest expiry deleted, as text).
 */
export const SWEEP_BATCH: SqlStatement = {
  name: 'nestjs_pg_idempotency_sweep_v2',
  types: ['int', 'bigint', 'timestamptz'],
  whole: true,
  text: `
WITH sweep_lock AS MATERIALIZED (SELECT pg_try_advisory_xact_lock($2::bigint) AS locked),
swept AS (
  DELETE FROM idempotency_keys
  WHERE (SELECT locked FROM sweep_lock) AND ctid = ANY (ARRAY(
    SELECT ctid FROM idempotency_keys AS k
    WHERE ${EXPIRED} AND k.expires_at >= coalesce($3::timestamptz, '-infinity')
    ORDER BY expires_at
    LIMIT $1
    FOR UPDATE SKIP LOCKED
  )) AND expires_at <= now() AND NOT (state = 'in_progress' AND locked_until > now())
  RETURNING expires_at
)
SELECT (SELECT locked FROM sweep_lock) AS locked, (SELECT count(*) FROM swept)::int AS deleted,
       (SELECT max(expires_at) FROM swept)::text AS last`,
};

/** The rows whose answer the sweeper drops: tombstones still holding theirs (the partial index's rows). */
const ANSWER_TO_DROP = `response_expires_at <= now() AND response_expires_at IS NOT NULL AND response_body IS NOT NULL
    AND completed_at >= created_at`;

/**
 * Drops the answers of one batch ($1 at most) of tombstones: completed keys past their ttl whose
 * row is kept longer (`tombstone` on their entry). Their status, `completed_at` and
 * `response_expires_at` stay until the row expires. Read from the partial index of such rows that
 * still hold an answer, and updated by their `ctid`; rows locked by a writer are skipped, never
 * waited on. Returns `dropped`.
 */
export const DROP_RESPONSES_BATCH: SqlStatement = {
  name: 'nestjs_pg_idempotency_drop_responses_v2',
  types: ['int'],
  whole: true,
  text: `
WITH dropped AS (
  UPDATE idempotency_keys AS k SET response_body = NULL, response_headers = NULL
  WHERE ctid = ANY (ARRAY(
    SELECT ctid FROM idempotency_keys WHERE ${ANSWER_TO_DROP} LIMIT $1 FOR UPDATE SKIP LOCKED
  )) AND ${TOMBSTONE} AND k.response_body IS NOT NULL
  RETURNING 1
)
SELECT count(*)::int AS dropped FROM dropped`,
};

/**
 * `DROP_RESPONSES_BATCH` on the partitioned table, where a `ctid` names a row only within its
 * partition: the rows are named by their primary key (which holds the partition key).
 */
export const DROP_RESPONSES_BATCH_PARTITIONED: SqlStatement = {
  name: 'nestjs_pg_idempotency_drop_responses_partitioned_v2',
  types: ['int'],
  whole: true,
  text: `
WITH dropped AS (
  UPDATE idempotency_keys AS k SET response_body = NULL, response_headers = NULL
  WHERE (k.key, k.caller, k.endpoint, k.expires_at) IN (
    SELECT key, caller, endpoint, expires_at FROM idempotency_keys WHERE ${ANSWER_TO_DROP} LIMIT $1 FOR UPDATE SKIP LOCKED
  ) AND ${TOMBSTONE} AND k.response_body IS NOT NULL
  RETURNING 1
)
SELECT count(*)::int AS dropped FROM dropped`,
};
