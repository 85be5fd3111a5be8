-- nestjs-pg-idempotency: the idempotency_keys table. Generated from
-- src/store/migrations/idempotency-keys.schema.ts by `npm run build`; safe to re-run.

CREATE TABLE IF NOT EXISTS idempotency_keys (
  key              varchar(255) COLLATE "C" NOT NULL,
  caller           text         COLLATE "C" NOT NULL,
  endpoint         text         COLLATE "C" NOT NULL,
  fingerprint      bytea        NOT NULL,
  state            text         NOT NULL DEFAULT 'in_progress'
                   CHECK (state IN ('in_progress', 'completed')),
  status           smallint,
  response_headers jsonb,
  response_body    bytea,
  locked_until     timestamptz,
  lease_token      bigint,
  created_at       timestamptz  NOT NULL DEFAULT now(),
  expires_at       timestamptz  NOT NULL,
  PRIMARY KEY (key, caller, endpoint)
);

CREATE INDEX IF NOT EXISTS idempotency_keys_expires_at_idx ON idempotency_keys (expires_at);
