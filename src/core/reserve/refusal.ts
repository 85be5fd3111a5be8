import type { IdempotentRequest } from '../../key/idempotent-request.js';
import type { StoredOutcomes } from '../../store/protect/stored-outcomes.js';
import type { KeyRow } from '../../store/table/key-row.js';
import type { Refusal } from './reservation.js';

/**
 * What a reservation that did not get the key found in its place: no live row means another
 * transaction holds the key uncommitted (expired rows count as absent). A completed row comes
 * with how long it lives on (ms), so that it can be remembered no longer than that; its outcome is
 * read through `outcomes`, which throws when a sealed one cannot be trusted. A completed row past
 * its ttl kept as a tombstone answers what it keeps (the other payload's mismatch first).
 */
export function refusalFor(
  row: KeyRow | undefined,
  { scope, fingerprint }: IdempotentRequest,
  outcomes: StoredOutcomes,
): Refusal & { expiresInMs?: number } {
  if (!row || row.expired) return { kind: 'in-progress' };
  if (!row.fingerprint.equals(fingerprint)) return { kind: 'mismatch' };
  if (row.state !== 'completed')
    return { kind: 'in-progress', retryAfterSeconds: Math.max(1, row.lease_seconds_left ?? 1) };
  if (row.tombstone)
    return {
      kind: 'tombstone',
      tombstone: {
        completedAt: new Date(Number(row.completed_at_ms)),
        responseExpiredAt: new Date(Number(row.response_expired_at_ms)),
        expiresAt: new Date(Number(row.expires_at_ms)),
        status: row.status ?? 0,
      },
    };
  const response = outcomes.read(row, scope);
  return { kind: 'completed', response, expiresInMs: Number(row.expires_in_ms) };
}
