-- A sample app's tables, beside the shipped migration's idempotency_keys.
CREATE TABLE payments (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  caller text,
  amount integer NOT NULL,
  currency text NOT NULL
);
CREATE TABLE ledger_entries (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  payment_id uuid NOT NULL REFERENCES payments (id),
  amount integer NOT NULL
);
