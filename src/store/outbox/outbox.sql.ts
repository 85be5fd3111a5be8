import type { SqlStatement } from '../../hosts/database-host.js';
import { COMPLETE_LEASE } from '../table/record.sql.js';

/**
 * The INSERT of staged messages, their six columns in arrays from parameter `$first` on (message
 * ids, publishers, destinations, ordering keys, payloads, headers), one row per element, in order;
 * `when`: a condition the rows are written under. `created_at` is the statement's own time: it
 * runs in the message that commits, so it is the commit's time within a round trip.
 */
function insertStaged(first: number, when = 'true'): string {
  const [ids, publishers, destinations, orderingKeys, payloads, headers] = [0, 1, 2, 3, 4, 5].map(
    (i) => `$${first + i}`,
  );
  return `INSERT INTO idempotency_outbox (message_id, publisher, destination, ordering_key, payload, headers, created_at)
  SELECT message_id, publisher, destination, ordering_key, payload, headers, clock_timestamp()
  FROM unnest(${ids}::text[], ${publishers}::text[], ${destinations}::text[], ${orderingKeys}::text[], ${payloads}::bytea[], ${headers}::jsonb[])
    WITH ORDINALITY AS staged(message_id, publisher, destination, ordering_key, payload, headers, position)
  WHERE ${when}
  ORDER BY position`;
}

/** The types of the staged messages' six arrays. */
const STAGED_TYPES = ['text[]', 'text[]', 'text[]', 'text[]', 'bytea[]', 'jsonb[]'];

/**
 * Writes the messages one keyed execution staged, in its transaction, just before the key's own
 * row: one row per message, in the order staged. Params: message ids, publishers, destinations,
 * ordering keys, payloads, headers (arrays of one length).
 */
export const STAGE_MESSAGES: SqlStatement = {
  name: 'nestjs_pg_idempotency_stage_messages_v1',
  types: STAGED_TYPES,
  text: insertStaged(1),
};

/**
 * Lease mode's recording with staged messages: `COMPLETE_LEASE` ($1–$9), and in the same statement
 * the messages ($10–$15, as `STAGE_MESSAGES`'s $1–$6) written only when the outcome was (the lease
 * still held). Returns `completed`: 1, or 0 when the lease was taken over (nothing written).
 */
export const COMPLETE_LEASE_AND_STAGE: SqlStatement = {
  name: 'nestjs_pg_idempotency_complete_lease_and_stage_v2',
  types: [...COMPLETE_LEASE.types, ...STAGED_TYPES],
  text: `
WITH completed AS (${COMPLETE_LEASE.text.trim()}
  RETURNING 1
), staged AS (
  ${insertStaged(COMPLETE_LEASE.types.length + 1, 'EXISTS (SELECT 1 FROM completed)')}
)
SELECT count(*)::int AS completed FROM completed`,
};

/**
 * Claims up to $1 messages to publish, for $2 ms, with the claim token $3: of every ordering key
 * with unsent messages, its oldest, when it goes to one of the publishers $4 (this relay's), unless
 * another relay's claim on it runs (or a failed publish put it off) until later. A message is
 * claimed by one relay at a time (`SKIP LOCKED` passes over one being claimed by another; a claim
 * that committed meanwhile fails the re-checked condition). The heads are found in one pass over
 * the unsent messages and handed on as an array of at most $1 ids, so the statement's cost is
 * linear in the unsent messages whatever the planner's statistics say of a table just filled.
 */
export const CLAIM_MESSAGES: SqlStatement = {
  name: 'nestjs_pg_idempotency_claim_messages_v2',
  types: ['int', 'bigint', 'bigint', 'text[]'],
  text: `
WITH heads AS (
  SELECT DISTINCT ON (ordering_key) id, publisher, claimed_until FROM idempotency_outbox
  WHERE sent_at IS NULL
  ORDER BY ordering_key, id
), claimable AS (
  SELECT o.id FROM idempotency_outbox o
  WHERE o.id = ANY (ARRAY(
      SELECT id FROM heads
      WHERE publisher = ANY($4::text[]) AND (claimed_until IS NULL OR claimed_until <= clock_timestamp())
      ORDER BY id
      LIMIT $1
    ))
    AND o.sent_at IS NULL AND o.publisher = ANY($4::text[])
    AND (o.claimed_until IS NULL OR o.claimed_until <= clock_timestamp())
  FOR UPDATE OF o SKIP LOCKED
)
UPDATE idempotency_outbox o
SET claimed_until = clock_timestamp() + $2::bigint * interval '1 millisecond', claim_token = $3, attempts = o.attempts + 1
FROM claimable
WHERE o.id = claimable.id
RETURNING o.id::text AS id, o.message_id, o.publisher, o.destination, o.payload, o.headers, o.attempts,
  (extract(epoch FROM clock_timestamp() - o.created_at) * 1000)::float8 AS waited_ms`,
};

/** Marks the messages $1 (ids) sent, while the claim $2 still holds them. */
export const MARK_SENT: SqlStatement = {
  name: 'nestjs_pg_idempotency_mark_sent_v1',
  types: ['bigint[]', 'bigint'],
  text: `
UPDATE idempotency_outbox
SET sent_at = clock_timestamp(), claimed_until = NULL, claim_token = NULL, last_error = NULL
WHERE id = ANY($1::bigint[]) AND claim_token = $2 AND sent_at IS NULL`,
};

/** A publish of message $1 under claim $2 failed with $4: it is not tried again for $3 ms. */
export const PUT_OFF: SqlStatement = {
  name: 'nestjs_pg_idempotency_put_off_v1',
  types: ['bigint', 'bigint', 'bigint', 'text'],
  text: `
UPDATE idempotency_outbox
SET claimed_until = clock_timestamp() + $3::bigint * interval '1 millisecond', claim_token = NULL, last_error = $4
WHERE id = $1 AND claim_token = $2 AND sent_at IS NULL`,
};

/** Deletes up to $2 messages sent more than $1 ms ago; returns how many. */
export const SWEEP_SENT: SqlStatement = {
  name: 'nestjs_pg_idempotency_sweep_sent_v1',
  types: ['bigint', 'int'],
  whole: true,
  text: `
WITH swept AS (
  DELETE FROM idempotency_outbox WHERE id IN (
    SELECT id FROM idempotency_outbox
    WHERE sent_at IS NOT NULL AND sent_at < clock_timestamp() - $1::bigint * interval '1 millisecond'
    LIMIT $2
  )
  RETURNING 1
)
SELECT count(*)::int AS swept FROM swept`,
};

/** The unsent messages and the age of the oldest, in ms (the outbox's lag). */
export const OUTBOX_LAG: SqlStatement = {
  name: 'nestjs_pg_idempotency_outbox_lag_v1',
  types: [],
  whole: true,
  text: `
SELECT count(*)::int AS unsent,
  coalesce(extract(epoch FROM clock_timestamp() - min(created_at)) * 1000, 0)::float8 AS oldest_ms
FROM idempotency_outbox WHERE sent_at IS NULL`,
};

/** The $1 oldest unsent messages, for the console: no payload, no header. */
export const OUTBOX_BACKLOG: SqlStatement = {
  name: 'nestjs_pg_idempotency_outbox_backlog_v1',
  types: ['int'],
  whole: true,
  text: `
SELECT id::text AS id, message_id, publisher, destination, ordering_key, attempts, last_error, created_at,
  claimed_until
FROM idempotency_outbox WHERE sent_at IS NULL ORDER BY id LIMIT $1`,
};

/** Makes the unsent message $1 (id) claimable now: a message put off after failures is tried at once. */
export const RETRY_NOW: SqlStatement = {
  name: 'nestjs_pg_idempotency_outbox_retry_now_v1',
  types: ['bigint'],
  whole: true,
  text: `
UPDATE idempotency_outbox SET claimed_until = NULL, claim_token = NULL
WHERE id = $1 AND sent_at IS NULL`,
};
