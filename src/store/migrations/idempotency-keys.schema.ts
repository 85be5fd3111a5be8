/**
 * The DDL of the `idempotency_keys` table, shared by the TypeORM migration class and the plain
 * SQL file in `migrations/` (the build writes that file from these statements). Every statement
 * is safe to re-run.
 *
 * - `key`, `caller` and `endpoint` use the "C" collation: they are opaque, case-sensitive
 *   strings compared byte for byte, so the primary key compares them with memcmp instead of the
 *   database's locale, and no operating-system collation update can ever reorder its index.
 * - `response_body` is `bytea`: the exact bytes the client received (JSONB would re-encode them).
 * - `fingerprint` is the SHA-256 of the canonical request (32 bytes).
 * - `state` is `in_progress` while a lease holder runs the handler, `completed` once the outcome
 *   is recorded. Transactional mode writes the row once, completed, just before its commit (the
 *   key's advisory lock is what marks it in flight).
 * - `locked_until` and `lease_token` serve lease mode (a committed in-flight reservation).
 * - `response_expires_at` and `completed_at` serve tombstones (`tombstone` on an entry): NULL on
 *   every other row. Such a row lives until `expires_at` (the tombstone's end), its response only
 *   until `response_expires_at` (the ttl's end); the sweeper then drops the response and keeps the
 *   rest: that the key completed, when (`completed_at`), and with which status.
 */
/** The columns of `idempotency_keys`, plain or partitioned (`idempotency-keys-partitioned.schema.ts`). */
export const KEY_TABLE_COLUMNS = `  key              varchar(255) COLLATE "C" NOT NULL,
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
  completed_at     timestamptz`;

/**
 * What tables created before tombstones lack, added where missing (plain or partitioned), and the
 * index of the responses the sweeper drops: rows without a tombstone are not in it.
 */
export const ADD_TOMBSTONE_COLUMNS: readonly string[] = [
  `ALTER TABLE idempotency_keys ADD COLUMN IF NOT EXISTS response_expires_at timestamptz, ADD COLUMN IF NOT EXISTS completed_at timestamptz`,
  `CREATE INDEX IF NOT EXISTS idempotency_keys_response_expires_at_idx ON idempotency_keys (response_expires_at) WHERE response_expires_at IS NOT NULL AND response_body IS NOT NULL`,
];

export const CREATE_IDEMPOTENCY_KEYS: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS idempotency_keys (
${KEY_TABLE_COLUMNS},
  PRIMARY KEY (key, caller, endpoint)
)`,
  `CREATE INDEX IF NOT EXISTS idempotency_keys_expires_at_idx ON idempotency_keys (expires_at)`,
  ...ADD_TOMBSTONE_COLUMNS,
];

export const DROP_IDEMPOTENCY_KEYS: readonly string[] = [`DROP TABLE IF EXISTS idempotency_keys`];
