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
  expires_at       timestamptz  NOT NULL`;

export const CREATE_IDEMPOTENCY_KEYS: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS idempotency_keys (
${KEY_TABLE_COLUMNS},
  PRIMARY KEY (key, caller, endpoint)
)`,
  `CREATE INDEX IF NOT EXISTS idempotency_keys_expires_at_idx ON idempotency_keys (expires_at)`,
];

export const DROP_IDEMPOTENCY_KEYS: readonly string[] = [`DROP TABLE IF EXISTS idempotency_keys`];
