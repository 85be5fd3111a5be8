import { hash } from 'node:crypto';

/**
 * A key in its scope: the same key in another scope is another request. The parse stage makes
 * it once per request (`scopeKey`); every later stage reads its fields.
 */
export interface ScopedKey {
  readonly key: string;
  /** The caller id; `''` is the shared scope of unidentified callers (opt-in). */
  readonly caller: string;
  /** `METHOD /path`: the method is an HTTP token (no space), so the two parts never blur. */
  readonly endpoint: string;
  /** An unambiguous encoding of the three parts: the scope's identity in this process. */
  readonly text: string;
  /**
   * The id of the scope's transaction-level advisory lock: the first 64 bits of a SHA-256 of
   * `text`, as a decimal string (a PostgreSQL bigint).
   */
  readonly lockId: string;
}

/** The scoped key; its lock id is hashed once, when first read (a duplicate answered here never needs it). */
export function scopeKey(key: string, caller: string, endpoint: string): ScopedKey {
  const text = JSON.stringify([key, caller, endpoint]);
  let lockId: string | undefined;
  return {
    key,
    caller,
    endpoint,
    text,
    get lockId() {
      return (lockId ??= hash('sha256', text, 'buffer').readBigInt64BE(0).toString());
    },
  };
}
