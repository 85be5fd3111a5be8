import { randomBytes } from 'node:crypto';
import { sqlState } from '../hosts/database-errors.js';
import type { Bound, TransactionHost } from '../hosts/transaction-host.js';
import { type KeyRow, keyRowParams, refusalFor } from './key-row.js';
import type { KeyRequest, Refusal } from './reservation.js';
import { KEY_ROW, LOCK_KEY_OR_FAIL, RESERVE_LEASE, RESERVE_LEASE_PARTITIONED } from './reservation.sql.js';

/**
 * Lease mode: reserves the key in its own committed statement with a lease of `leaseMs` and a
 * fresh fencing token (returned). No connection is held while the handler runs. Bounded as lease
 * mode's other statements are: a statement that gets no connection, or no answer over a
 * connection that died without a word, within a third of the lease is given up (503). On the
 * partitioned table the key's lock and the reservation are two statements of one message (one
 * round trip all the same).
 */
export async function reserveLease(
  host: TransactionHost,
  request: KeyRequest,
  leaseMs: number,
  partitioned: boolean,
): Promise<{ kind: 'reserved'; token: string } | (Refusal & { expiresInMs?: number })> {
  const { scope, fingerprint, ttlMs } = request;
  const token = randomBytes(8).readBigInt64BE(0).toString();
  const bound = { timeoutMs: Math.max(1, Math.floor(leaseMs / 3)) };
  const reserve = partitioned
    ? () => reservePartitioned(host, [scope.key, scope.caller, scope.endpoint, fingerprint, ttlMs, leaseMs, token], scope.lockId, bound)
    : async () => (await host.runAlone('reserving the key', [RESERVE_LEASE, [scope.lockId, scope.key, scope.caller, scope.endpoint, fingerprint, ttlMs, leaseMs, token]], bound)).rows.length === 1;
  for (let attempt = 1; ; attempt++) {
    if (await reserve()) return { kind: 'reserved', token };
    const { rows } = await host.runAlone('reading the key', [KEY_ROW, keyRowParams(request)], bound);
    const row = rows[0] as KeyRow | undefined;
    // The two statements read `now()` apart: a row that expired (or a lease that ended) in
    // between, or one deleted meanwhile, is the key free now, not a request in flight.
    if (attempt < 3 && (row === undefined || row.takeable)) continue;
    return refusalFor(row, request);
  }
}

/** Division by zero: `LOCK_KEY_OR_FAIL` found the key's lock taken. */
const LOCK_TAKEN = '22012';

/** Whether the partitioned table's lease reservation wrote the key's row (false: the lock or a row was in the way). */
async function reservePartitioned(host: TransactionHost, params: unknown[], lockId: string, bound: Bound): Promise<boolean> {
  try {
    const [, reserved] = await host.runTogether('reserving the key', [[LOCK_KEY_OR_FAIL, [lockId]], [RESERVE_LEASE_PARTITIONED, params]], bound);
    return reserved.rows.length === 1;
  } catch (error) {
    if (sqlState(error) === LOCK_TAKEN) return false;
    throw error;
  }
}
