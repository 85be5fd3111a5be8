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

/** How long ago the oldest expired row expired (ms), read from the expiry index; NULL when none has. */
export const SWEEP_LAG: SqlStatement = {
  name: 'nestjs_pg_idempotency_health_sweep_lag_v1',
  types: [],
  whole: true,
  text: `
SELECT floor(extract(epoch FROM now() - min(expires_at)) * 1000)::bigint AS lag_ms
FROM idempotency_keys WHERE expires_at <= now()`,
};
