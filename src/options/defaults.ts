import type { CallerResolver, IdempotencyModuleOptions, StorePolicy } from './module-options.js';
import type { IdempotencyMode, IdempotentRouteOptions } from './route-options.js';

/** Statuses that are retryable by nature and so never stored. */
const TRANSIENT_4XX = new Set([408, 409, 425, 429]);

/** The default failure policy: see {@link IdempotencyModuleOptions.storeResponse}. */
export const defaultStorePolicy: StorePolicy = (status) => status >= 200 && status < 500 && !TRANSIENT_4XX.has(status);

/** The default of {@link IdempotencyModuleOptions.maxResponseBytes}: 1 MiB. */
export const DEFAULT_MAX_RESPONSE_BYTES = 1_048_576;

/**
 * Headers a replay carries when the first response had them: where the result is, and what
 * describes the stored bytes (their type, content coding, language and disposition), so that a
 * replay of, say, gzip bytes says it is gzip.
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
export const defaultCaller: CallerResolver = (request) => {
  const user = request?.user;
  if (typeof user === 'string' || typeof user === 'number' || typeof user === 'bigint') return user;
  if (user === null || typeof user !== 'object') return undefined;
  const id = user.id ?? user.sub ?? undefined;
  const ownText =
    id !== null &&
    typeof id === 'object' &&
    !Array.isArray(id) &&
    typeof id.toString === 'function' &&
    id.toString !== Object.prototype.toString;
  return ownText ? String(id) : id;
};

/** Every module option's default (see {@link IdempotencyModuleOptions} for what each does). */
export const MODULE_DEFAULTS = {
  dataSource: 'default',
  typeormAccess: 'auto',
  ttl: '24h',
  keyFormat: 'uuid-or-ulid',
  caller: defaultCaller,
  anonymousCallers: 'reject',
  replayHeaders: [],
  expiryHeader: false,
  retryAfterSeconds: 1,
  storeResponse: defaultStorePolicy,
  maxResponseBytes: DEFAULT_MAX_RESPONSE_BYTES,
  sweepInterval: '1m',
  sweepBatchSize: 1000,
  lease: '30s',
  renewLease: true,
  replayCache: { maxEntries: 10_000, maxBytes: 32 * 1024 * 1024, maxAge: '1m' },
  metrics: { prefix: '' },
  preparedStatements: true,
  drainTimeout: '10s',
  openTelemetry: true,
  checkTables: true,
} as const satisfies Required<
  Omit<IdempotencyModuleOptions, 'pool' | 'partitionInterval' | 'storage' | 'problemDocumentation' | 'outbox'>
>;

/** The defaults of the route options that do not fall back to a module option. */
export const ROUTE_DEFAULTS = {
  required: true,
  wait: 0,
} as const satisfies IdempotentRouteOptions;

/** The mode of every entry's keys unless its options say otherwise. */
export const DEFAULT_MODE = 'transactional' satisfies IdempotencyMode;

/** The longest delay Node's timers take (about 24.8 days); longer ones fire at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A lease is renewed every third of it, by a timer. */
export const MAX_LEASE_MS = 3 * MAX_TIMER_MS;

/**
 * The shortest lease: renewed every third, a shorter one would be renewed faster than a round
 * trip to PostgreSQL under load, and end while its holder still runs.
 */
export const MIN_LEASE_MS = 1_000;

/** Ten years: far enough for any retry, and well inside PostgreSQL's timestamps. */
export const MAX_TTL_MS = 10 * 365 * 86_400_000;

/** The default of {@link IdempotencyModuleOptions.partitionInterval}: a quarter of the ttl, at least one minute. */
export function defaultPartitionIntervalMs(ttlMs: number): number {
  return Math.max(60_000, Math.floor(ttlMs / 4));
}

/** The shortest partition interval: partitions are named to the second. */
export const MIN_PARTITION_INTERVAL_MS = 1_000;
