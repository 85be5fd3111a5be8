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
  /** How long after its completion the key is kept as a tombstone once its response is gone at `ttlMs` (none: not kept). */
  readonly tombstoneMs?: number;
}

/**
 * The request of `scope`, whose fingerprint `compute` makes once, when first read. Its getter is
 * its class's, not an object literal's: V8 holds a literal's getters in accessor pairs made in the
 * old generation, so what they capture (the request's payload) survives every scavenge until a
 * full collection.
 */
export function idempotentRequest(
  scope: ScopedKey,
  ttlMs: number,
  compute: () => Buffer,
  tombstoneMs?: number,
): IdempotentRequest {
  return new LazyFingerprintRequest(scope, ttlMs, compute, tombstoneMs);
}

class LazyFingerprintRequest implements IdempotentRequest {
  #fingerprint?: Buffer;
  #compute?: () => Buffer;

  constructor(
    readonly scope: ScopedKey,
    readonly ttlMs: number,
    compute: () => Buffer,
    readonly tombstoneMs?: number,
  ) {
    this.#compute = compute;
  }

  get fingerprint(): Buffer {
    if (!this.#fingerprint) {
      this.#fingerprint = this.#compute!();
      this.#compute = undefined;
    }
    return this.#fingerprint;
  }
}
