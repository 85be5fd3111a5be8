import type { StoredResponse } from '../response/stored-response.js';
import type { KeyRequest, Refusal } from './reservation.js';

/** The row of a scoped key, as KEY_ROW reads it. */
export interface KeyRow {
  fingerprint: Buffer;
  state: 'in_progress' | 'completed';
  status: number | null;
  response_headers: [string, string][] | null;
  response_body: Buffer | null;
  expired: boolean;
  /** Expired, or a lease that ended with this request's fingerprint. */
  takeable: boolean;
  lease_seconds_left: number | null;
  expires_in_ms: string;
}

/** Statement parameters that name a key's row: key, caller, endpoint, fingerprint. */
export function keyRowParams({ scope, fingerprint }: KeyRequest): unknown[] {
  return [scope.key, scope.caller, scope.endpoint, fingerprint];
}

/**
 * What a reservation that did not get the key found in its place: no live row means another
 * transaction holds the key uncommitted (expired rows count as absent). A completed row comes
 * with how long it lives on (ms), so that it can be remembered no longer than that.
 */
export function refusalFor(row: KeyRow | undefined, { fingerprint }: KeyRequest): Refusal & { expiresInMs?: number } {
  if (!row || row.expired) return { kind: 'in-progress' };
  if (!row.fingerprint.equals(fingerprint)) return { kind: 'mismatch' };
  if (row.state !== 'completed') return { kind: 'in-progress', retryAfterSeconds: Math.max(1, row.lease_seconds_left ?? 1) };
  const response: StoredResponse = { status: row.status!, headers: row.response_headers ?? [], body: row.response_body ?? Buffer.alloc(0) };
  return { kind: 'completed', response, expiresInMs: Number(row.expires_in_ms) };
}
