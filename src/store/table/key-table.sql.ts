import type { SqlStatement } from '../../hosts/database-host.js';

/*
 * Rules over rows of `idempotency_keys`, shared by the statements that reserve, record and sweep.
 * Every reservation first takes the scoped key's 64-bit advisory lock with
 * pg_try_advisory_xact_lock, so that a duplicate in flight is answered at once (409) instead of
 * queueing on an uncommitted row and pinning a pool connection. Every writer that creates or
 * takes over a key's row holds that lock (transactional reservations until their commit, lease
 * reservations for their statement); a lease holder's later writes are fenced by its token; the
 * sweeper only deletes expired rows.
 */

/** A lease-mode row whose holder's lease still runs: never expired, never swept. */
export const LIVE_LEASE = `(k.state = 'in_progress' AND k.locked_until > now())`;

/** A row past its ttl: treated as absent, whether or not the sweeper has deleted it yet. */
export const EXPIRED = `(k.expires_at <= now() AND NOT ${LIVE_LEASE})`;

/**
 * A completed row past its ttl kept as a tombstone (`tombstone` on its entry): its response is
 * gone (or goes at the next sweep), and a retry runs nothing until the row expires. Its answer
 * dropped is a tombstone too, whatever the reader's `now()` (a transaction's is its start, which
 * may precede the sweep it sees). Only a row recorded with its tombstone is one: a writer that
 * knows no tombstones (an older build, in a rolling deploy) takes a row over without clearing
 * `completed_at`, which is then older than the row's `created_at`.
 */
export const TOMBSTONE = `(k.state = 'completed' AND k.completed_at >= k.created_at AND (k.response_expires_at <= now() OR k.response_body IS NULL))`;

/**
 * Whether the row `k` may be taken over by a request whose fingerprint is `fingerprint`: past its
 * ttl, or a lease that ended (same fingerprint). Any other row stands.
 */
export function takeable(fingerprint: string): string {
  return `(${EXPIRED} OR (k.state = 'in_progress' AND k.locked_until <= now() AND k.fingerprint = ${fingerprint}))`;
}

/** Whether `idempotency_keys` (as the search path finds it) is partitioned; no row when it is missing. */
export const KEY_TABLE_KIND: SqlStatement = {
  name: 'nestjs_pg_idempotency_key_table_kind_v1',
  types: [],
  whole: true,
  text: `SELECT c.relkind = 'p' AS partitioned FROM pg_class AS c WHERE c.oid = to_regclass('idempotency_keys')`,
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
