import type { IdempotentRequest } from '../parse/idempotent-request.js';
import type { StoredResponse } from '../response/stored-response.js';
import type { KeyRow } from '../table/key-row.js';
import type { Refusal } from './reservation.js';

/**
 * What a reservation that did not get the key found in its place: no live row means another
 * transaction holds the key uncommitted (expired rows count as absent). A completed row comes
 * with how long it lives on (ms), so that it can be remembered no longer than that.
 */
export function refusalFor(row: KeyRow | undefined, { fingerprint }: IdempotentRequest): Refusal & { expiresInMs?: number } {
  if (!row || row.expired) return { kind: 'in-progress' };
  if (!row.fingerprint.equals(fingerprint)) return { kind: 'mismatch' };
  if (row.state !== 'completed') return { kind: 'in-progress', retryAfterSeconds: Math.max(1, row.lease_seconds_left ?? 1) };
  const response: StoredResponse = { status: row.status!, headers: row.response_headers ?? [], body: row.response_body ?? Buffer.alloc(0) };
  return { kind: 'completed', response, expiresInMs: Number(row.expires_in_ms) };
}
