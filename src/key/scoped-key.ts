import { hash } from 'node:crypto';

/**
 * How a scoped key's row names it: `'clear'` stores the key, the caller and the endpoint as sent;
 * `'digest'` stores `sha256:` and the hex SHA-256 of the caller and the key (`keyDigest`) as the
 * key, `''` as the caller, and `sha256:` and the hex SHA-256 of the endpoint as the endpoint (a
 * path holds ids too).
 */
export type KeyStorage = 'clear' | 'digest';

/** What the `key` column of a digested row starts with; a clear key of the built-in formats never does. */
export const KEY_DIGEST_PREFIX = 'sha256:';

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
  /** The SHA-256 of the caller and the key (`keyDigest`), the same whichever way the row stores them. */
  readonly digest: Buffer;
  /** The SHA-256 of the endpoint's UTF-8 bytes. */
  readonly endpointDigest: Buffer;
  /** The `key`, `caller` and `endpoint` columns of the scope's row, as its `KeyStorage` writes them. */
  readonly row: { readonly key: string; readonly caller: string; readonly endpoint: string };
}

/**
 * The scoped key; its lock id, digest and row identity are computed once, when first read (a
 * duplicate answered here never needs them).
 */
export function scopeKey(key: string, caller: string, endpoint: string, storage: KeyStorage = 'clear'): ScopedKey {
  return new LazyScopedKey(key, caller, endpoint, storage);
}

/**
 * A scoped key whose derived fields are getters of its class, not of an object literal: V8 holds
 * a literal's getters in accessor pairs made in the old generation, so what they capture survives
 * every scavenge until a full collection.
 */
class LazyScopedKey implements ScopedKey {
  readonly text: string;
  #lockId?: string;
  #digest?: Buffer;
  #endpointDigest?: Buffer;
  #row?: ScopedKey['row'];
  readonly #storage: KeyStorage;

  constructor(
    readonly key: string,
    readonly caller: string,
    readonly endpoint: string,
    storage: KeyStorage,
  ) {
    this.text = JSON.stringify([key, caller, endpoint]);
    this.#storage = storage;
  }

  get lockId(): string {
    return (this.#lockId ??= hash('sha256', this.text, 'buffer').readBigInt64BE(0).toString());
  }

  get digest(): Buffer {
    return (this.#digest ??= keyDigest(this.key, this.caller));
  }

  get endpointDigest(): Buffer {
    return (this.#endpointDigest ??= hash('sha256', this.endpoint, 'buffer'));
  }

  get row(): ScopedKey['row'] {
    return (this.#row ??=
      this.#storage === 'clear'
        ? { key: this.key, caller: this.caller, endpoint: this.endpoint }
        : {
            key: KEY_DIGEST_PREFIX + this.digest.toString('hex'),
            caller: '',
            endpoint: KEY_DIGEST_PREFIX + this.endpointDigest.toString('hex'),
          });
  }
}

/**
 * The SHA-256 of the caller's UTF-8 bytes, preceded by their length (4 bytes, big-endian), and
 * then the key's UTF-8 bytes: the length keeps `("ab", "c")` and `("a", "bc")` apart. The
 * digesting migration computes the same in SQL (`digest-idempotency-keys.schema.ts`).
 */
export function keyDigest(key: string, caller: string): Buffer {
  const callerBytes = Buffer.from(caller, 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32BE(callerBytes.length);
  return hash('sha256', Buffer.concat([length, callerBytes, Buffer.from(key, 'utf8')]), 'buffer');
}
