-- nestjs-pg-idempotency: what an idempotency_keys table created before tombstones lacks (plain or
-- partitioned); a table created since has it. Generated from
-- src/store/migrations/idempotency-keys.schema.ts by `npm run build`; safe to re-run.

ALTER TABLE idempotency_keys ADD COLUMN IF NOT EXISTS response_expires_at timestamptz, ADD COLUMN IF NOT EXISTS completed_at timestamptz;

CREATE INDEX IF NOT EXISTS idempotency_keys_response_expires_at_idx ON idempotency_keys (response_expires_at) WHERE response_expires_at IS NOT NULL AND response_body IS NOT NULL;
