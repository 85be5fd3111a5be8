/**
 * The DDL of the `idempotency_outbox` table, shared by the TypeORM migration class and the plain
 * SQL file in `migrations/` (the build writes that file from these statements). Every statement
 * is safe to re-run.
 *
 * - One row per staged message, written in the key's transaction (`outbox/`): `id` is the order
 *   the messages were staged in; `message_id` the id the broker and the consumer see (derived
 *   from the key and the message's position, the same on every re-publish).
 * - `publisher` names one of the module's `outbox.publishers`; `destination` is its queue or
 *   routing key (RabbitMQ) or subject (JetStream); `payload` the body's bytes and `headers` its
 *   headers as name-value pairs, or, with `storage.encryption`, both sealed in `payload` and
 *   `headers` `{"sealedWith": id}`, as the key table's outcomes are.
 * - `ordering_key`: messages of one ordering key are published one at a time, in `id` order.
 * - `claimed_until` and `claim_token`: a relay's claim (a lease; none is held across the broker's
 *   round trip); after a failed publish, the time before which the message is not tried again.
 * - `sent_at`: when the broker confirmed it; the sweeper deletes sent rows after a retention.
 */
export const CREATE_IDEMPOTENCY_OUTBOX: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS idempotency_outbox (
  id            bigserial    PRIMARY KEY,
  message_id    text         COLLATE "C" NOT NULL,
  publisher     text         COLLATE "C" NOT NULL,
  destination   text         NOT NULL,
  ordering_key  text         COLLATE "C" NOT NULL,
  payload       bytea        NOT NULL,
  headers       jsonb        NOT NULL DEFAULT '[]',
  created_at    timestamptz  NOT NULL DEFAULT now(),
  claimed_until timestamptz,
  claim_token   bigint,
  attempts      integer      NOT NULL DEFAULT 0,
  last_error    text,
  sent_at       timestamptz
)`,
  `CREATE INDEX IF NOT EXISTS idempotency_outbox_unsent_idx ON idempotency_outbox (ordering_key, id) WHERE sent_at IS NULL`,
  `CREATE INDEX IF NOT EXISTS idempotency_outbox_sent_at_idx ON idempotency_outbox (sent_at) WHERE sent_at IS NOT NULL`,
];

export const DROP_IDEMPOTENCY_OUTBOX: readonly string[] = [`DROP TABLE IF EXISTS idempotency_outbox`];
