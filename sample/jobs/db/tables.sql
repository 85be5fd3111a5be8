-- The app's own table; `npm run migrate` creates it after the module's idempotency_keys.
CREATE TABLE IF NOT EXISTS payments (
  id         uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
  caller     text        NOT NULL,
  amount     integer     NOT NULL CHECK (amount > 0),
  currency   char(3)     NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
