import type { ScopedKey } from './scoped-key.js';

/**
 * What every entry asks the core to de-duplicate (an HTTP request, a message, a call): its scoped
 * key, its fingerprint (computed once, when first read: a duplicate of a key held here is answered
 * without it) and how long its key lives.
 */
export interface IdempotentRequest {
  readonly scope: ScopedKey;
  readonly fingerprint: Buffer;
  readonly ttlMs: number;
}
