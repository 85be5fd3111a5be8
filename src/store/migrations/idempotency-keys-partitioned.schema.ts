import { ADD_TOMBSTONE_COLUMNS, KEY_TABLE_COLUMNS } from './idempotency-keys.schema.js';

/**
 * The DDL of the opt-in partitioned `idempotency_keys`: the same columns as the plain table
 * (`idempotency-keys.schema.ts`), partitioned by range of `expires_at`. The module finds the kind
 * of table at bootstrap; on this one its sweeper creates partitions ahead and drops those wholly
 * past expiry instead of deleting rows.
 *
 * - The primary key holds `expires_at`, as a unique key of a partitioned table must hold its
 *   partition key: PostgreSQL cannot keep a scoped key unique across partitions. One scoped key
 *   has at most one row because every writer that creates or takes over a row holds the key's
 *   advisory lock, and looks the key up, with a snapshot taken after the lock, before it writes.
 * - No expiry index: the sweeper drops partitions, and never looks rows up by expiry. A partial
 *   index of the rows of running leases lets it find, without reading a partition, whether a
 *   lease in it still runs (transactional mode's rows, written completed, are not in it).
 * - No partition is created here: the module creates them at bootstrap and on every sweep.
 */
export const CREATE_PARTITIONED_IDEMPOTENCY_KEYS: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS idempotency_keys (
${KEY_TABLE_COLUMNS},
  PRIMARY KEY (key, caller, endpoint, expires_at)
) PARTITION BY RANGE (expires_at)`,
  `CREATE INDEX IF NOT EXISTS idempotency_keys_leases_idx ON idempotency_keys (locked_until) WHERE state = 'in_progress'`,
  ...ADD_TOMBSTONE_COLUMNS,
];
