/**
 * What a key's row can hold, for every entry: the key, the caller and the endpoint together stay
 * under PostgreSQL's B-tree limit for the primary key's index entry (2704 bytes), and hold only
 * what PostgreSQL text stores as it was given.
 */

/** The longest key, in characters. */
export const MAX_KEY_LENGTH = 255;

/** Longest caller id (a tenant, a user), in UTF-8 bytes. */
export const MAX_CALLER_BYTES = 256;

/** Longest endpoint (`METHOD /path`, `MESSAGE pattern`, `CALL scope`), in UTF-8 bytes. */
export const MAX_ENDPOINT_LENGTH = 2048;

/** Printable ASCII: what a key that is not quoted (an HTTP token, a broker's id, a call's key) holds. */
const PRINTABLE_KEY = /^[\x21-\x7e]+$/;

/**
 * What a caller id cannot hold: PostgreSQL text has no NUL, and the driver would turn an unpaired
 * surrogate into U+FFFD, so two different callers would share one scope.
 */
const UNSTORABLE = /[\0\p{Cs}]/u;

/**
 * Why `key` cannot be a key (printable ASCII, 1 to 255 characters): `'missing'`, or what the key
 * is (`is longer than 255 characters`), for the entry to say of its own key; `undefined` when it can.
 */
export function keyProblem(key: unknown): 'missing' | `is ${string}` | undefined {
  if (typeof key !== 'string' || key === '') return 'missing';
  if (key.length > MAX_KEY_LENGTH) return `is longer than ${MAX_KEY_LENGTH} characters`;
  if (!PRINTABLE_KEY.test(key)) return 'is not printable ASCII';
  return undefined;
}

/** Why `caller` cannot be stored as a caller id, or `undefined` when it can. */
export function callerProblem(caller: string): string | undefined {
  if (UNSTORABLE.test(caller) || Buffer.byteLength(caller) > MAX_CALLER_BYTES) {
    return `the caller is not a string of at most ${MAX_CALLER_BYTES} bytes that PostgreSQL can store`;
  }
  return undefined;
}
