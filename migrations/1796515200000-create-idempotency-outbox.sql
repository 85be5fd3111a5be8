-- nestjs-pg-idempotency: the idempotency_outbox table (docs/outbox.md), for apps that stage
-- messages in the key's transaction. Generated from
-- src/store/migrations/idempotency-outbox.schema.ts by `npm run build`; safe to re-run.

CREATE TABLE IF NOT EXISTS idempotency_outbox (
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
);

CREATE INDEX IF NOT EXISTS idempotency_outbox_unsent_idx ON idempotency_outbox (ordering_key, id) WHERE sent_at IS NULL;

CREATE INDEX IF NOT EXISTS idempotency_outbox_sent_at_idx ON idempotency_outbox (sent_at) WHERE sent_at IS NOT NULL;
