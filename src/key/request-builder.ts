import { type IdempotentRequest, idempotentRequest } from './idempotent-request.js';
import { callerProblem, keyProblem, MAX_CALLER_BYTES, MAX_ENDPOINT_LENGTH } from './key-limits.js';
import { type KeyStorage, scopeKey } from './scoped-key.js';

/**
 * How each entry's endpoints begin (`METHOD host/path` for HTTP routes, whose method is theirs):
 * a message's pattern, a mutation's `Type.field`, a call's scope follows.
 */
export const ENDPOINT_PREFIXES = { message: 'MESSAGE ', mutation: 'GRAPHQL ', call: 'CALL ' } as const;

/** What an entry read of its input, for `buildRequest()`. */
export interface RequestInput {
  /** The key as read; `checked` when the entry's own key format checked it already (HTTP, GraphQL). */
  readonly key: unknown;
  readonly keyChecked?: boolean;
  /** The caller's id (a user, a tenant); `''` for none. */
  readonly caller: unknown;
  /** `reject`: a request without a caller is refused (`anonymous`); `shared`: it shares the empty caller's keys. */
  readonly anonymous: 'reject' | 'shared';
  /** The endpoint's prefix (`ENDPOINT_PREFIXES`, or an HTTP method and a space) and its name. */
  readonly endpoint: { readonly prefix: string; readonly name: string };
  readonly ttlMs: number;
  /** The entry's tombstone, if it keeps one. */
  readonly tombstoneMs?: number;
  readonly keyStorage: KeyStorage;
  /** The payload's fingerprint, computed once when first read (a duplicate held here never needs it). */
  readonly fingerprint: () => Buffer;
}

/** Why an input is no request a key's row can hold, for the entry to say in its own words. */
export type RequestRefusal =
  /** The key is missing, or what it is (`is longer than 255 characters`). */
  | { readonly refused: 'key'; readonly problem: 'missing' | `is ${string}` }
  /** The endpoint is longer than a row keeps: its name may have at most `maxNameBytes` UTF-8 bytes. */
  | { readonly refused: 'endpoint'; readonly maxNameBytes: number }
  /** No caller, where the module refuses anonymous callers. */
  | { readonly refused: 'anonymous' }
  /** A caller a row cannot hold (not a string, over `maxBytes` UTF-8 bytes, a NUL or a lone surrogate). */
  | { readonly refused: 'caller'; readonly maxBytes: number };

/**
 * The request every entry asks the core to de-duplicate, built one way for all: its key checked
 * (unless the entry's key format did), then its endpoint, then its caller, each against what a
 * key's row holds (`key-limits.ts`); the key scoped by caller and endpoint (`scopeKey()`, in the
 * module's key storage) and the fingerprint left to compute when first read.
 */
export function buildRequest(input: RequestInput): IdempotentRequest | RequestRefusal {
  const { key, caller, endpoint } = input;
  const problem = input.keyChecked ? undefined : keyProblem(key);
  if (problem !== undefined) return { refused: 'key', problem };
  const name = endpoint.prefix + endpoint.name;
  if (Buffer.byteLength(name) > MAX_ENDPOINT_LENGTH)
    return { refused: 'endpoint', maxNameBytes: MAX_ENDPOINT_LENGTH - Buffer.byteLength(endpoint.prefix) };
  if (caller === '' && input.anonymous === 'reject') return { refused: 'anonymous' };
  if (typeof caller !== 'string' || callerProblem(caller) !== undefined)
    return { refused: 'caller', maxBytes: MAX_CALLER_BYTES };
  return idempotentRequest(
    scopeKey(key as string, caller, name, input.keyStorage),
    input.ttlMs,
    input.fingerprint,
    input.tombstoneMs,
  );
}

/** Whether `built` is a refusal. */
export function isRefusal(built: IdempotentRequest | RequestRefusal): built is RequestRefusal {
  return 'refused' in built;
}
