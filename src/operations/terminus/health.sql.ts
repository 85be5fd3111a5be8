import type { SqlStatement } from '../../hosts/database-host.js';

/** Which of $1 (column names, comma-separated) `idempotency_keys` has; none when there is no such table. */
export const KEY_TABLE_SHAPE: SqlStatement = {
  name: 'nestjs_pg_idempotency_health_shape_v1',
  types: ['text'],
  whole: true,
  text: `
SELECT attname AS column FROM pg_attribute
WHERE attrelid = to_regclass('idempotency_keys') AND attnum > 0 AND NOT attisdropped AND attname = ANY (string_to_array($1::text, ','))`,
};
