-- The app's own table; `npm run migrate` creates it after the module's idempotency_keys.
CREATE TABLE IF NOT EXISTS refunds (
  id                 uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
  payment_id         uuid        NOT NULL,
  amount             integer     NOT NULL CHECK (amount > 0),
  -- The processor's id for the refund: unique, so that recording it twice keeps one row.
  provider_refund_id text        NOT NULL UNIQUE,
  created_at         timestamptz NOT NULL DEFAULT now()
);
