-- The app's own tables; `npm run migrate` creates them after the module's idempotency_keys.
CREATE TABLE IF NOT EXISTS accounts (
  id      text    PRIMARY KEY,
  balance integer NOT NULL
);
CREATE TABLE IF NOT EXISTS payouts (
  id         uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
  payout_id  text        NOT NULL,
  account    text        NOT NULL REFERENCES accounts (id),
  amount     integer     NOT NULL CHECK (amount > 0),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS reports (
  id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  slot       timestamptz NOT NULL,
  payouts    integer     NOT NULL,
  total      bigint      NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
