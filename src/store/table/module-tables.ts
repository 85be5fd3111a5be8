import type { SqlStatement } from '../../hosts/database-host.js';

/** A table of the module's: the columns its statements use, and how an app creates it. */
export interface ModuleTable {
  readonly name: 'idempotency_keys' | 'idempotency_outbox';
  readonly columns: readonly string[];
  /** The shipped SQL file, in the package's `migrations/` folder. */
  readonly sqlFile: string;
  /** The TypeORM migration class, exported by the package. */
  readonly migrationClass: string;
  /** The flags of `npx nestjs-pg-idempotency migrate` that create it. */
  readonly cliFlags: string;
}

export const KEY_TABLE: ModuleTable = {
  name: 'idempotency_keys',
  columns: [
    'key',
    'caller',
    'endpoint',
    'fingerprint',
    'state',
    'status',
    'response_headers',
    'response_body',
    'locked_until',
    'lease_token',
    'created_at',
    'expires_at',
  ],
  sqlFile: '1795996800000-create-idempotency-keys.sql',
  migrationClass: 'CreateIdempotencyKeys1795996800000',
  cliFlags: '',
};

/** What a key table created before tombstones lacks, and the migration that adds it. */
export const KEY_TABLE_TOMBSTONES: ModuleTable = {
  name: 'idempotency_keys',
  columns: ['response_expires_at', 'completed_at'],
  sqlFile: '1796860800000-add-idempotency-tombstones.sql',
  migrationClass: 'AddIdempotencyTombstones1796860800000',
  cliFlags: '',
};

export const OUTBOX_TABLE: ModuleTable = {
  name: 'idempotency_outbox',
  columns: [
    'id',
    'message_id',
    'publisher',
    'destination',
    'ordering_key',
    'payload',
    'headers',
    'created_at',
    'claimed_until',
    'claim_token',
    'attempts',
    'last_error',
    'sent_at',
  ],
  sqlFile: '1796515200000-create-idempotency-outbox.sql',
  migrationClass: 'CreateIdempotencyOutbox1796515200000',
  cliFlags: ' --outbox',
};

/**
 * For each table named in $1, as the search path finds it: whether it exists, whether it is
 * partitioned, and which of its columns it has.
 */
export const TABLES_SHAPE: SqlStatement = {
  name: 'nestjs_pg_idempotency_tables_shape_v1',
  types: ['text[]'],
  whole: true,
  text: `
SELECT t.name, c.oid IS NOT NULL AS present, coalesce(c.relkind = 'p', false) AS partitioned,
       coalesce(array_agg(a.attname::text) FILTER (WHERE a.attname IS NOT NULL), '{}') AS columns
FROM unnest($1::text[]) AS t(name)
LEFT JOIN pg_class AS c ON c.oid = to_regclass(t.name)
LEFT JOIN pg_attribute AS a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
GROUP BY t.name, c.oid, c.relkind`,
};

/** One row of `TABLES_SHAPE`. */
export interface TableShape {
  name: string;
  present: boolean;
  partitioned: boolean;
  columns: string[];
}

/** What `shape` lacks of `table`, in words (`undefined`: nothing). */
export function missingPart(table: ModuleTable, shape: TableShape | undefined): string | undefined {
  if (!shape?.present) return `there is no ${table.name} table`;
  const missing = table.columns.filter((column) => !shape.columns.includes(column));
  return missing.length > 0 ? `${table.name} lacks ${missing.join(', ')}` : undefined;
}
