-- The app's own tables, applied by `npm run migrate` after the module's idempotency_keys, in the
-- same transaction (nestjs-pg-idempotency migrate --sql db/tables.sql). Safe to re-run.
CREATE TABLE IF NOT EXISTS payments (
  id         uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
  caller     text        NOT NULL,
  amount     integer     NOT NULL CHECK (amount > 0),
  currency   char(3)     NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS ledger_entries (
  id         uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
  payment_id uuid        NOT NULL REFERENCES payments (id) ON DELETE CASCADE,
  amount     integer     NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
