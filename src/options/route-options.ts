import type { FingerprintOption } from '../key/fingerprint.js';
import type { KeyFormat } from '../key/key-format.js';
import type { Duration } from './duration.js';
import type { CallerResolver, RedactionOptions, StorePolicy } from './module-options.js';

/**
 * How a route holds its key while the handler runs:
 * - `'transactional'` (default): the key is inserted in the transaction that carries the
 *   handler's business writes; both commit together or roll back together;
 * - `'lease'`: for effects outside the database (a card processor, an e-mail provider): the key is
 *   reserved in its own short committed transaction with a lease and a fencing token.
 */
export type IdempotencyMode = 'transactional' | 'lease';

/**
 * Where a route reads its key (a webhook's event id):
 * - `{ header: 'X-GitHub-Delivery' }`: a request header, read as `Idempotency-Key` is (one value,
 *   a bare token or an RFC 8941 string);
 * - `{ body: 'id' }`: a field of the parsed JSON body, by dotted path (`'data.object.id'`): a
 *   string of printable ASCII, or a finite number;
 * - a function of the request (Express's or Fastify's) returning the key (a string or a finite
 *   number), or `undefined` when the request has none;
 * - `{ argument: 'input.key' }` (GraphQL mutations only, which read a header or an argument): an
 *   argument of the mutation by dotted path, a string of printable ASCII or a finite number.
 */
export type KeySource =
  { header: string } | { body: string } | { argument: string } | ((request: any) => string | number | undefined | null);

/**
 * Options of one `@Idempotent()` route or GraphQL mutation; unset fields take the module's. A
 * mutation takes `keyFrom` (a header or an argument), `caller`, `required`, `ttl`, `keyFormat`,
 * `retryAfterSeconds`, `mode`, `lease` and `renewLease`; the options about an HTTP request and
 * response (`fingerprint`, `storeResponse`, `maxResponseBytes`, `wait`, `redact`) fail its bootstrap.
 */
export interface IdempotentRouteOptions {
  /** Where the key is read. Default: the `Idempotency-Key` header. */
  keyFrom?: KeySource;
  /**
   * The caller the route's keys belong to: a resolver, or one name for every request (a webhook
   * receiver's provider, `'stripe'`: no request is refused as unidentified). Default: the module's `caller`.
   */
  caller?: CallerResolver | string;
  /** Whether a request without a key is refused (400) or runs without de-duplication. Default: `true`. */
  required?: boolean;
  ttl?: Duration;
  keyFormat?: KeyFormat;
  /** Narrows (field paths) or replaces (a function) the request fingerprint. Default: body + query. */
  fingerprint?: FingerprintOption;
  storeResponse?: StorePolicy;
  retryAfterSeconds?: number;
  maxResponseBytes?: number;
  /** Default: `'transactional'`. */
  mode?: IdempotencyMode;
  /** Lease mode: the lease. Default: the module's `lease`. */
  lease?: Duration;
  /** Lease mode: whether the lease is renewed while the handler runs. Default: the module's `renewLease`. */
  renewLease?: boolean;
  /** See `ExecutionOptions.tombstone`. Default: none. */
  tombstone?: Duration;
  /** Whether the route's keyed answers carry `Idempotency-Key-Expires`. Default: the module's `expiryHeader`. */
  expiryHeader?: boolean;
  /**
   * Wait mode: a duplicate that arrives while the first request is in flight waits up to this
   * long for it to finish and then gets its replay (or runs, if the first failed and released
   * the key), instead of an immediate 409. It holds no connection while waiting. Default: `0`
   * (answer 409 at once).
   */
  wait?: Duration;
  /**
   * Headers and JSON body fields left out of the stored outcome: the first client receives them,
   * replays answer without them (and so are no longer byte-exact). Default: nothing.
   */
  redact?: RedactionOptions;
}
