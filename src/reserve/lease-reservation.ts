import { randomBytes } from 'node:crypto';
import type { TransactionHost } from '../hosts/transaction-host.js';
import { type KeyRow, keyRowParams, refusalFor } from './key-row.js';
import type { KeyRequest, Refusal } from './reservation.js';
import { KEY_ROW, RESERVE_LEASE } from './reservation.sql.js';

/**
 * Lease mode: reserves the key in its own committed statement with a lease of `leaseMs` and a
 * fresh fencing token (returned). No connection is held while the handler runs. Bounded as lease
 * mode's other statements are: a statement that gets no connection, or no answer over a
 * connection that died without a word, within a third of the lease is given up (503).
 */
export async function reserveLease(
  host: TransactionHost,
  request: KeyRequest,
  leaseMs: number,
): Promise<{ kind: 'reserved'; token: string } | (Refusal & { expiresInMs?: number })> {
  const { scope, fingerprint, ttlMs } = request;
  const token = randomBytes(8).readBigInt64BE(0).toString();
  const reservation = [scope.lockId, scope.key, scope.caller, scope.endpoint, fingerprint, ttlMs, leaseMs, token];
  const bound = { timeoutMs: Math.max(1, Math.floor(leaseMs / 3)) };
  for (let attempt = 1; ; attempt++) {
    const reserved = await host.runAlone('reserving the key', [RESERVE_LEASE, reservation], bound);
    if (reserved.rows.length === 1) return { kind: 'reserved', token };
    const { rows } = await host.runAlone('reading the key', [KEY_ROW, keyRowParams(request)], bound);
    const row = rows[0] as KeyRow | undefined;
    // The two statements read `now()` apart: a row that expired (or a lease that ended) in
    // between, or one deleted meanwhile, is the key free now, not a request in flight.
    if (attempt < 3 && (row === undefined || row.takeable)) continue;
    return refusalFor(row, request);
  }
}
