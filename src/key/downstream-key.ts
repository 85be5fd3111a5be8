import { createHash } from 'node:crypto';
import type { ScopedKey } from './scoped-key.js';

/**
 * A stable idempotency key for a downstream provider, derived from the scoped key and a name for
 * the call (`'charge'`, `'refund-email'`): the same inputs give the same key on every retry and
 * after a lease takeover, so the provider de-duplicates the effect too. Formatted as a UUID
 * (version 8, RFC 9562), which providers accept as an opaque key.
 */
export function deriveDownstreamKey(scope: ScopedKey, name: string): string {
  const hash = createHash('sha256')
    .update(JSON.stringify(['nestjs-pg-idempotency:downstream', scope.caller, scope.endpoint, scope.key, name]))
    .digest();
  hash[6] = (hash[6] & 0x0f) | 0x80;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
