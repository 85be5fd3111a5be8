-- The ledger's table, created by `npm run migrate` after the module's key table.
CREATE TABLE IF NOT EXISTS ledger_entries (
  id         uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
  payment_id uuid        NOT NULL,
  -- A payment credits, a refund debits; an entry of 0 is refused.
  amount     integer     NOT NULL CHECK (amount <> 0),
  created_at timestamptz NOT NULL DEFAULT now()
);
