import type { ExecutionContext } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { IdempotencyConfigurationError } from './idempotency.errors.js';
import type { Duration } from './key/duration.js';
import { toMilliseconds } from './key/duration.js';
import type { FingerprintOption } from './key/fingerprint.js';
import type { KeyFormat } from './key/key-format.js';
import type { ReplayCacheOptions } from './store/local-keys.js';

/** Decides from the status code the client received whether an outcome is stored and replayed. */
export type StorePolicy = (status: number) => boolean;

/**
 * Returns the authenticated caller's id (a string or a finite number), or `undefined` when the
 * request has none. Any other value fails the request with a 500: it cannot tell callers apart.
 */
export type CallerResolver = (request: any, context: ExecutionContext) => string | number | bigint | undefined | null;

/** Options of `IdempotencyModule.forRoot()` / `forRootAsync()`. Every field has a default. */
export interface IdempotencyModuleOptions {
  /**
   * The TypeORM DataSource that holds both `idempotency_keys` and your business tables: the name
   * of a `TypeOrmModule` connection, or a DataSource instance. Default: `'default'`.
   */
  dataSource?: string | DataSource;
  /** How long a completed key is replayed. Default: `'24h'`. */
  ttl?: Duration;
  /** Which keys are accepted. Default: `'uuid-or-ulid'`. */
  keyFormat?: KeyFormat;
  /** The caller a key belongs to. Default: `request.user.id`, else `.sub`, else a string `request.user`. */
  caller?: CallerResolver;
  /**
   * What happens when `caller` finds nobody: `'reject'` answers 401 (no response is ever shared
   * between unidentified callers); `'shared'` puts all of them in one scope. Default: `'reject'`.
   */
  anonymousCallers?: 'reject' | 'shared';
  /** Response headers replayed besides the built-in allow-list. Set-Cookie never is. Default: `[]`. */
  replayHeaders?: readonly string[];
  /** `Retry-After` (seconds) of a 409 while the first request is in flight. Default: `1`. */
  retryAfterSeconds?: number;
  /**
   * Which outcomes are stored. Default: 2xx, 3xx and 4xx except 408, 409, 425 and 429; never 5xx.
   */
  storeResponse?: StorePolicy;
  /**
   * The largest response body (bytes) that is stored. A response that would be stored but is
   * larger is not sent: its writes roll back, the key stays free, and the client gets a 500
   * `response-too-large` problem. Default: `1048576` (1 MiB).
   */
  maxResponseBytes?: number;
  /** How often expired rows are swept; `0` disables the schedule. Default: `'1m'`. */
  sweepInterval?: Duration;
  /** Rows deleted per sweeper statement. Default: `1000`. */
  sweepBatchSize?: number;
  /** How long a lease-mode holder keeps the key before a retry may take it over. Default: `'30s'`. */
  lease?: Duration;
  /**
   * Whether a lease-mode holder renews its lease every third of its length while its handler
   * runs, so that a slow handler keeps its key and only a holder that died or stalled loses it.
   * `false`: the lease is fixed, and a retry takes the key over once it ends even while the
   * first holder still runs (its late outcome is then refused). Default: `true`.
   */
  renewLease?: boolean;
  /**
   * The in-process cache of completed outcomes, so that replays and duplicates need no round
   * trip; `false` turns it off. Default: `{ maxEntries: 10_000, maxBytes: 32 MiB }`.
   */
  replayCache?: ReplayCacheOptions | false;
  /**
   * Prometheus metrics through `prom-client`, when it is installed: `false` turns them off; a
   * `registry` (a prom-client Registry) and a name `prefix` may be given. Default: the default
   * registry, no prefix.
   */
  metrics?: false | { registry?: unknown; prefix?: string };
  /**
   * Whether the per-request statements are `PREPARE`d once per connection (planned once) or sent
   * whole every time. Turn it off behind a pooler in transaction mode (PgBouncer), where a
   * connection's server session changes between transactions. Default: `true`.
   */
  preparedStatements?: boolean;
}

/**
 * How a route holds its key while the handler runs:
 * - `'transactional'` (default): the key is inserted in the transaction that carries the
 *   handler's business writes; both commit together or roll back together;
 * - `'lease'`: for effects outside the database (a card processor, an e-mail provider): the key is
 *   reserved in its own short committed transaction with a lease and a fencing token.
 */
export type IdempotencyMode = 'transactional' | 'lease';

/** Options of one `@Idempotent()` route; unset fields take the module's. */
export interface IdempotentRouteOptions {
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
  /**
   * Wait mode: a duplicate that arrives while the first request is in flight waits up to this
   * long for it to finish and then gets its replay (or runs, if the first failed and released
   * the key), instead of an immediate 409. It holds no connection while waiting. Default: `0`
   * (answer 409 at once).
   */
  wait?: Duration;
}

/** Statuses that are retryable by nature and so never stored. */
const TRANSIENT_4XX = new Set([408, 409, 425, 429]);

/** The default failure policy: see {@link IdempotencyModuleOptions.storeResponse}. */
export const defaultStorePolicy: StorePolicy = (status) =>
  status >= 200 && status < 500 && !TRANSIENT_4XX.has(status);

/** The default of {@link IdempotencyModuleOptions.maxResponseBytes}: 1 MiB. */
export const DEFAULT_MAX_RESPONSE_BYTES = 1_048_576;

/**
 * Headers a replay carries when the first response had them: where the result is,
 * and what describes the stored bytes (their type, content coding, language and disposition), so
 * that a replay of, say, gzip bytes says it is gzip.
 */
export const REPLAYED_HEADERS = [
  'content-type',
  'content-encoding',
  'content-language',
  'content-disposition',
  'location',
  'content-location',
  'etag',
  'last-modified',
];

/**
 * The default {@link CallerResolver}: `request.user.id`, else `.sub`, else `request.user` itself
 * when it is an id. An id object with a `toString()` of its own (a MongoDB ObjectId) is its text.
 */
export function defaultCaller(request: any): string | number | bigint | undefined {
  const user = request?.user;
  if (typeof user === 'string' || typeof user === 'number' || typeof user === 'bigint') return user;
  if (user === null || typeof user !== 'object') return undefined;
  const id = user.id ?? user.sub ?? undefined;
  const ownText = id !== null && typeof id === 'object' && !Array.isArray(id) && typeof id.toString === 'function' && id.toString !== Object.prototype.toString;
  return ownText ? String(id) : id;
}

/** Module options with every default applied, merged once at bootstrap. */
export interface IdempotencySettings {
  dataSource: string | DataSource;
  ttlMs: number;
  keyFormat: KeyFormat;
  caller: CallerResolver;
  anonymousCallers: 'reject' | 'shared';
  replayHeaders: ReadonlySet<string>;
  retryAfterSeconds: number;
  storeResponse: StorePolicy;
  maxResponseBytes: number;
  sweepIntervalMs: number;
  sweepBatchSize: number;
  leaseMs: number;
  renewLease: boolean;
  replayCache: Required<ReplayCacheOptions> | false;
  metrics: false | { registry?: unknown; prefix: string };
  preparedStatements: boolean;
}

/** The settings of one route: the module's, overridden by the route's. */
export interface RouteSettings {
  /** `Controller.method`, the route's name in events and metrics. */
  handler: string;
  required: boolean;
  ttlMs: number;
  keyFormat: KeyFormat;
  fingerprint?: FingerprintOption;
  storeResponse: StorePolicy;
  retryAfterSeconds: number;
  maxResponseBytes: number;
  mode: IdempotencyMode;
  leaseMs: number;
  renewLease: boolean;
  waitMs: number;
  /**
   * The route's controller routes by host (`@Controller({ host })`): the host is part of the
   * key's endpoint, so that one path served for several hosts (tenants) holds a scope per host.
   */
  scopedByHost: boolean;
}

/** The metadata key under which `@Controller({ host })` keeps its host (Nest's HOST_METADATA). */
const HOST_METADATA = 'host';

export function resolveModuleOptions(options: IdempotencyModuleOptions = {}): IdempotencySettings {
  return naming('IdempotencyModule options', () => moduleSettings(options));
}

/**
 * Runs `resolve`, naming `where` in the configuration error it throws (which module options, which
 * `@Idempotent()` route), so that an app with many routes learns which one to change.
 */
function naming<T>(where: string, resolve: () => T): T {
  try {
    return resolve();
  } catch (error) {
    if (!(error instanceof IdempotencyConfigurationError)) throw error;
    throw new IdempotencyConfigurationError(`${where}: ${error.message.replace(/^nestjs-pg-idempotency: /, '')}`);
  }
}

function moduleSettings(options: IdempotencyModuleOptions): IdempotencySettings {
  const replayHeaders = new Set(REPLAYED_HEADERS);
  for (const name of headerNames(options.replayHeaders)) {
    if (name.toLowerCase() !== 'set-cookie') replayHeaders.add(name.toLowerCase());
  }
  return {
    dataSource: options.dataSource ?? 'default',
    ttlMs: positiveDuration(options.ttl ?? '24h', 'ttl', MAX_TTL_MS),
    keyFormat: keyFormatOption(options.keyFormat) ?? 'uuid-or-ulid',
    caller: functionOption(options.caller, 'caller') ?? defaultCaller,
    anonymousCallers: oneOf(options.anonymousCallers, ['reject', 'shared'], 'anonymousCallers') ?? 'reject',
    replayHeaders,
    retryAfterSeconds: positiveInteger(options.retryAfterSeconds ?? 1, 'retryAfterSeconds'),
    storeResponse: functionOption(options.storeResponse, 'storeResponse') ?? defaultStorePolicy,
    maxResponseBytes: positiveInteger(options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES, 'maxResponseBytes'),
    sweepIntervalMs: atMost(toMilliseconds(options.sweepInterval ?? '1m', 'sweepInterval'), MAX_TIMER_MS, 'sweepInterval'),
    sweepBatchSize: positiveInteger(options.sweepBatchSize ?? 1000, 'sweepBatchSize'),
    leaseMs: leaseDuration(options.lease ?? '30s'),
    renewLease: booleanOption(options.renewLease, true, 'renewLease'),
    preparedStatements: booleanOption(options.preparedStatements, true, 'preparedStatements'),
    metrics: options.metrics === false ? false : { registry: options.metrics?.registry, prefix: options.metrics?.prefix ?? '' },
    replayCache:
      options.replayCache === false
        ? false
        : {
            maxEntries: positiveInteger(options.replayCache?.maxEntries ?? 10_000, 'replayCache.maxEntries'),
            maxBytes: positiveInteger(options.replayCache?.maxBytes ?? 32 * 1024 * 1024, 'replayCache.maxBytes'),
          },
  };
}

export function resolveRouteOptions(
  module: IdempotencySettings,
  route: IdempotentRouteOptions,
  handler = 'unknown',
  /** The route's controller class, when known. */
  controller?: object,
): RouteSettings {
  return naming(`@Idempotent() on ${handler}`, () => routeSettings(module, route, handler, controller));
}

function routeSettings(module: IdempotencySettings, route: IdempotentRouteOptions, handler: string, controller?: object): RouteSettings {
  return {
    handler,
    required: booleanOption(route.required, true, 'required'),
    ttlMs: route.ttl === undefined ? module.ttlMs : positiveDuration(route.ttl, 'ttl', MAX_TTL_MS),
    keyFormat: keyFormatOption(route.keyFormat) ?? module.keyFormat,
    fingerprint: fingerprintOption(route.fingerprint),
    storeResponse: functionOption(route.storeResponse, 'storeResponse') ?? module.storeResponse,
    retryAfterSeconds:
      route.retryAfterSeconds === undefined
        ? module.retryAfterSeconds
        : positiveInteger(route.retryAfterSeconds, 'retryAfterSeconds'),
    maxResponseBytes:
      route.maxResponseBytes === undefined
        ? module.maxResponseBytes
        : positiveInteger(route.maxResponseBytes, 'maxResponseBytes'),
    mode: oneOf(route.mode, ['transactional', 'lease'], 'mode') ?? 'transactional',
    leaseMs: route.lease === undefined ? module.leaseMs : leaseDuration(route.lease),
    renewLease: booleanOption(route.renewLease, module.renewLease, 'renewLease'),
    waitMs: route.wait === undefined ? 0 : toMilliseconds(route.wait, 'wait'),
    scopedByHost: controller !== undefined && Reflect.getMetadata(HOST_METADATA, controller) !== undefined,
  };
}

/** `value` when it is one of `allowed` (or unset); a typo must not fall back to another behaviour. */
function oneOf<T extends string>(value: T | undefined, allowed: readonly T[], option: string): T | undefined {
  if (value === undefined || allowed.includes(value)) return value;
  throw new IdempotencyConfigurationError(`option "${option}" must be ${allowed.map((a) => `'${a}'`).join(' or ')}, got ${describe(value)}`);
}

function functionOption<T extends Function>(value: T | undefined, option: string): T | undefined {
  if (value === undefined || typeof value === 'function') return value;
  throw new IdempotencyConfigurationError(`option "${option}" must be a function, got ${describe(value)}`);
}

function keyFormatOption(value: KeyFormat | undefined): KeyFormat | undefined {
  if (value === undefined || value === 'uuid-or-ulid' || value === 'printable-ascii' || value instanceof RegExp || typeof value === 'function') {
    return value;
  }
  throw new IdempotencyConfigurationError(`option "keyFormat" must be 'uuid-or-ulid', 'printable-ascii', a RegExp or a function, got ${describe(value)}`);
}

/** A list of body field paths, or a function: a lone string would be read as a list of its characters. */
function fingerprintOption(value: FingerprintOption | undefined): FingerprintOption | undefined {
  if (value === undefined || typeof value === 'function') return value;
  if (Array.isArray(value) && value.every((path) => typeof path === 'string' && path !== '')) return value;
  throw new IdempotencyConfigurationError(`option "fingerprint" must be a list of body field paths (['amount']) or a function, got ${describe(value)}`);
}

function headerNames(value: readonly string[] | undefined): readonly string[] {
  if (value === undefined) return [];
  if (Array.isArray(value) && value.every((name) => typeof name === 'string' && /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name))) return value;
  throw new IdempotencyConfigurationError(`option "replayHeaders" must be a list of header names, got ${describe(value)}`);
}

function describe(value: unknown): string {
  return typeof value === 'string' ? `'${value}'` : Array.isArray(value) ? JSON.stringify(value) : String(value);
}

function booleanOption(value: boolean | undefined, fallback: boolean, option: string): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new IdempotencyConfigurationError(`option "${option}" must be true or false, got ${String(value)}`);
  return value;
}

/** The longest delay Node's timers take (about 24.8 days); longer ones fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** A lease is renewed every third of it, by a timer. */
const MAX_LEASE_MS = 3 * MAX_TIMER_MS;

/** The shortest lease accepted (see `leaseDuration`). */
const MIN_LEASE_MS = 1_000;
/** Ten years: far enough for any retry, and well inside PostgreSQL's timestamps. */
const MAX_TTL_MS = 10 * 365 * 86_400_000;

function positiveDuration(duration: Duration, option: string, maxMs: number): number {
  const ms = toMilliseconds(duration, option);
  if (ms < 1) throw new IdempotencyConfigurationError(`option "${option}" must be longer than 0`);
  return atMost(ms, maxMs, option);
}

/**
 * A lease of at least 1 s: renewed every third, a shorter one would be renewed faster than a
 * round trip to PostgreSQL under load, and end while its holder still runs.
 */
function leaseDuration(duration: Duration): number {
  const ms = positiveDuration(duration, 'lease', MAX_LEASE_MS);
  if (ms < MIN_LEASE_MS) throw new IdempotencyConfigurationError(`option "lease" must be at least ${MIN_LEASE_MS} ms, got ${ms}`);
  return ms;
}

function atMost(ms: number, maxMs: number, option: string): number {
  if (ms > maxMs) throw new IdempotencyConfigurationError(`option "${option}" must be at most ${maxMs} ms, got ${ms}`);
  return ms;
}

function positiveInteger(value: number, option: string): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new IdempotencyConfigurationError(`option "${option}" must be a positive integer, got ${value}`);
  }
  return value;
}
