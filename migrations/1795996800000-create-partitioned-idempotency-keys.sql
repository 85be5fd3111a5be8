-- nestjs-pg-idempotency: the idempotency_keys table partitioned by expiry (opt-in, instead of
-- 1795996800000-create-idempotency-keys.sql). Generated from
-- src/store/migrations/idempotency-keys-partitioned.schema.ts by `npm run build`; safe to re-run.
-- The module creates the partitions; see docs/partitioned-keys.md.

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
  response_expires_at timestamptz,
  completed_at     timestamptz,
  PRIMARY KEY (key, caller, endpoint, expires_at)
) PARTITION BY RANGE (expires_at);

CREATE INDEX IF NOT EXISTS idempotency_keys_leases_idx ON idempotency_keys (locked_until) WHERE state = 'in_progress';

ALTER TABLE idempotency_keys ADD COLUMN IF NOT EXISTS response_expires_at timestamptz, ADD COLUMN IF NOT EXISTS completed_at timestamptz;

CREATE INDEX IF NOT EXISTS idempotency_keys_response_expires_at_idx ON idempotency_keys (response_expires_at) WHERE response_expires_at IS NOT NULL AND response_body IS NOT NULL;
