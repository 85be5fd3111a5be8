import { createHash } from 'node:crypto';

/** Where a key belongs: the same key in another scope is another request. */
export interface KeyScope {
  key: string;
  /** The caller id; `''` is the shared scope of unidentified callers (opt-in). */
  caller: string;
  /** `METHOD /path`: the method is an HTTP token (no space), so the two parts never blur. */
  endpoint: string;
}

const texts = new WeakMap<KeyScope, string>();

/** An unambiguous encoding of the scope's three parts, computed once per scope object. */
export function scopeText(scope: KeyScope): string {
  let text = texts.get(scope);
  if (text === undefined) texts.set(scope, (text = JSON.stringify([scope.key, scope.caller, scope.endpoint])));
  return text;
}

/**
 * The id of the scope's transaction-level advisory lock: the first 64 bits of a SHA-256 over an
 * unambiguous encoding of the three parts. Returned as a decimal string (a PostgreSQL bigint).
 */
export function scopeLockId(scope: KeyScope): string {
  const digest = createHash('sha256').update(scopeText(scope)).digest();
  return digest.readBigInt64BE(0).toString();
}
