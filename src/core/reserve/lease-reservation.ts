import { randomBytes } from 'node:crypto';
import type { DatabaseHost } from '../../hosts/database-host.js';
import type { IdempotentRequest } from '../../key/idempotent-request.js';
import { type KeyRow, keyRowParams } from '../../store/table/key-row.js';
import type { StoredOutcomes } from '../../store/protect/stored-outcomes.js';
import type { KeyTableStrategy } from '../../store/table/key-table-strategy.js';
import { KEY_ROW } from '../../store/table/reservation.sql.js';
import { refusalFor } from './refusal.js';
import type { Refusal } from './reservation.js';

/**
 * Lease mode: reserves the key in its own committed statement with a lease of `leaseMs` and a
 * fresh fencing token (returned). No connection is held while the handler runs. Bounded as lease
 * mode's other statements are: a statement that gets no connection, or no answer over a
 * connection that died without a word, within a third of the lease is given up (503).
 */
export async function reserveLease(
  host: DatabaseHost,
  request: IdempotentRequest,
  leaseMs: number,
  table: KeyTableStrategy,
  outcomes: StoredOutcomes,
): Promise<{ kind: 'reserved'; token: string } | (Refusal & { expiresInMs?: number })> {
  const { scope, fingerprint, ttlMs } = request;
  const token = randomBytes(8).readBigInt64BE(0).toString();
  const bound = { timeoutMs: Math.max(1, Math.floor(leaseMs / 3)) };
  const lease = {
    lockId: scope.lockId,
    key: scope.row.key,
    caller: scope.row.caller,
    endpoint: scope.row.endpoint,
    fingerprint,
    ttlMs,
    leaseMs,
    token,
  };
  for (let attempt = 1; ; attempt++) {
    if (await table.reserveLease(host, lease, bound)) return { kind: 'reserved', token };
    const { rows } = await host.runAlone('reading the key', [KEY_ROW, keyRowParams(request)], bound);
    const row = rows[0] as KeyRow | undefined;
    // The two statements read `now()` apart: a row that expired (or a lease that ended) in
    // between, or one deleted meanwhile, is the key free now, not a request in flight.
    if (attempt < 3 && (row === undefined || row.takeable)) continue;
    return refusalFor(row, request, outcomes);
  }
}
