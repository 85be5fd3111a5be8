-- The shop's tables, created by `npm run migrate` after the module's key and outbox tables.
CREATE TABLE IF NOT EXISTS orders (
  id         uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
  sku        text        NOT NULL,
  quantity   integer     NOT NULL CHECK (quantity > 0),
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS stock (
  sku       text    PRIMARY KEY,
  available integer NOT NULL CHECK (available >= 0)
);

INSERT INTO stock (sku, available) VALUES ('widget', 1000000), ('gadget', 10) ON CONFLICT (sku) DO NOTHING;
