import type { FingerprintOption } from '../key/fingerprint.js';
import type { KeyStorage } from '../key/scoped-key.js';
import type { StoredOutcomes } from '../store/protect/stored-outcomes.js';
import type { Redaction } from '../store/redaction.js';
import { type AcceptedKeys, acceptedKeys, type KeyFormat } from '../key/key-format.js';
import { defined, type ExecutionSettings, executionSettings } from './execution-settings.js';
import type { OutboxSettings } from './outbox-options.js';
import { outboxSettings } from './outbox-settings.js';
import {
  aBoolean,
  aCaller,
  aFingerprint,
  aFunction,
  aKeyFormat,
  aPool,
  aPositiveInteger,
  aProblemLink,
  aRedaction,
  aStorage,
  headerNames,
  milliseconds,
  naming,
  oneOf,
} from './checks.js';
import {
  defaultPartitionIntervalMs,
  MAX_LEASE_MS,
  MAX_TIMER_MS,
  MAX_TTL_MS,
  MIN_LEASE_MS,
  MIN_PARTITION_INTERVAL_MS,
  MODULE_DEFAULTS,
  REPLAYED_HEADERS,
  ROUTE_DEFAULTS,
} from './defaults.js';
import type {
  CallerResolver,
  DataSourceLike,
  IdempotencyModuleOptions,
  PgPoolLike,
  StorePolicy,
} from './module-options.js';
import type { IdempotentRouteOptions } from './route-options.js';
import { KEY_EXPIRES_HEADER } from '../idempotency.constants.js';

/** The replay cache's bounds, resolved. */
export interface ReplayCacheLimits {
  maxEntries: number;
  maxBytes: number;
  maxAgeMs: number;
}

/** Module options with every default applied, merged once at bootstrap. */
export interface IdempotencySettings {
  /** The node-postgres host's pool; `undefined`: the TypeORM host. */
  pool?: PgPoolLike;
  dataSource: string | DataSourceLike;
  typeormAccess: 'auto' | 'public-api';
  ttlMs: number;
  keyFormat: KeyFormat;
  /** The `Link` header of every problem response (`problemDocumentation`), if any. */
  problemLink?: string;
  caller: CallerResolver;
  anonymousCallers: 'reject' | 'shared';
  replayHeaders: ReadonlySet<string>;
  expiryHeader: boolean;
  retryAfterSeconds: number;
  storeResponse: StorePolicy;
  maxResponseBytes: number;
  sweepIntervalMs: number;
  sweepBatchSize: number;
  /** The span of expiry times of one partition of the partitioned table. */
  partitionIntervalMs: number;
  leaseMs: number;
  renewLease: boolean;
  replayCache: ReplayCacheLimits | false;
  metrics: false | { registry?: unknown; prefix: string };
  preparedStatements: boolean;
  /** How a row names its key (`storage.keys`). */
  keyStorage: KeyStorage;
  /** How long the shutdown waits for keys in flight (`drainTimeout`). */
  drainTimeoutMs: number;
  /** Spans and metrics through `@opentelemetry/api`, when installed. */
  openTelemetry: boolean;
  /** How outcomes are stored: in clear, or sealed (`storage.encryption`). */
  outcomes: StoredOutcomes;
  /** Whether bootstrap fails when the database lacks the module's tables. */
  checkTables: boolean;
  /** The outbox, when the app configured one. */
  outbox?: OutboxSettings;
}

/** The settings of one route: the module's, overridden by the route's, resolved once at bootstrap. */
export interface RouteSettings extends ExecutionSettings {
  /** `Controller.method`, the route's name in events and metrics. */
  handler: string;
  required: boolean;
  /** The caller a request's key belongs to: the route's `caller`, else the module's. */
  caller: CallerResolver;
  /** The keys the route accepts: their check, and their format in words. */
  keys: AcceptedKeys;
  fingerprint?: FingerprintOption;
  storeResponse: StorePolicy;
  retryAfterSeconds: number;
  maxResponseBytes: number;
  waitMs: number;
  /**
   * The route's controller routes by host (`@Controller({ host })`): the host is part of the
   * key's endpoint, so that one path served for several hosts (tenants) holds a scope per host.
   */
  scopedByHost: boolean;
  /** The `Link` header of every problem response, if any (the module's `problemDocumentation`). */
  problemLink?: string;
  /** What the stored outcome leaves out (`redact`). */
  redaction: Redaction;
  /** Whether keyed answers carry `Idempotency-Key-Expires`. */
  expiryHeader: boolean;
  /**
   * The route's caller is one name (`caller: 'stripe'`, a webhook provider's route): its tombstone
   * is answered 200, as a provider retries any other status.
   */
  namedCaller: boolean;
}

/** The metadata key under which `@Controller({ host })` keeps its host (Nest's HOST_METADATA). */
const HOST_METADATA = 'host';

export function resolveModuleOptions(options: IdempotencyModuleOptions = {}): IdempotencySettings {
  return naming('IdempotencyModule options', () =>
    moduleSettings({ ...MODULE_DEFAULTS, ...defined(options) } as ModuleOptionsWithDefaults),
  );
}

export function resolveRouteOptions(
  module: IdempotencySettings,
  route: IdempotentRouteOptions,
  handler = 'unknown',
  /** The route's controller class, when known. */
  controller?: object,
): RouteSettings {
  return naming(`@Idempotent() on ${handler}`, () =>
    routeSettings(module, { ...ROUTE_DEFAULTS, ...defined(route) }, handler, controller),
  );
}

type Undefaulted = 'pool' | 'partitionInterval' | 'storage' | 'problemDocumentation' | 'outbox';
type ModuleOptionsWithDefaults = Required<Omit<IdempotencyModuleOptions, Undefaulted>> &
  Pick<IdempotencyModuleOptions, Undefaulted>;

function moduleSettings(options: ModuleOptionsWithDefaults): IdempotencySettings {
  // The key's expiry is stored with the answer it was sent with, and replayed with it.
  const replayHeaders = new Set([...REPLAYED_HEADERS, KEY_EXPIRES_HEADER.toLowerCase()]);
  for (const name of headerNames(options.replayHeaders)) {
    if (name.toLowerCase() !== 'set-cookie') replayHeaders.add(name.toLowerCase());
  }
  const ttlMs = milliseconds(options.ttl, 'ttl', { minMs: 1, maxMs: MAX_TTL_MS });
  const cache =
    options.replayCache === false ? false : { ...MODULE_DEFAULTS.replayCache, ...defined(options.replayCache) };
  return {
    pool: aPool(options.pool),
    dataSource: options.dataSource,
    typeormAccess: oneOf(options.typeormAccess, ['auto', 'public-api'], 'typeormAccess'),
    ttlMs,
    keyFormat: aKeyFormat(options.keyFormat),
    problemLink: aProblemLink(options.problemDocumentation),
    caller: aFunction(options.caller, 'caller'),
    anonymousCallers: oneOf(options.anonymousCallers, ['reject', 'shared'], 'anonymousCallers'),
    replayHeaders,
    expiryHeader: aBoolean(options.expiryHeader, 'expiryHeader'),
    retryAfterSeconds: aPositiveInteger(options.retryAfterSeconds, 'retryAfterSeconds'),
    storeResponse: aFunction(options.storeResponse, 'storeResponse'),
    maxResponseBytes: aPositiveInteger(options.maxResponseBytes, 'maxResponseBytes'),
    sweepIntervalMs: milliseconds(options.sweepInterval, 'sweepInterval', { maxMs: MAX_TIMER_MS }),
    sweepBatchSize: aPositiveInteger(options.sweepBatchSize, 'sweepBatchSize'),
    partitionIntervalMs:
      options.partitionInterval === undefined
        ? defaultPartitionIntervalMs(ttlMs)
        : milliseconds(options.partitionInterval, 'partitionInterval', {
            minMs: MIN_PARTITION_INTERVAL_MS,
            maxMs: MAX_TTL_MS,
          }),
    leaseMs: milliseconds(options.lease, 'lease', { minMs: MIN_LEASE_MS, maxMs: MAX_LEASE_MS }),
    renewLease: aBoolean(options.renewLease, 'renewLease'),
    preparedStatements: aBoolean(options.preparedStatements, 'preparedStatements'),
    ...aStorage(options.storage),
    drainTimeoutMs: milliseconds(options.drainTimeout, 'drainTimeout', { maxMs: MAX_TIMER_MS }),
    openTelemetry: aBoolean(options.openTelemetry, 'openTelemetry'),
    checkTables: aBoolean(options.checkTables, 'checkTables'),
    outbox: outboxSettings(options.outbox),
    metrics: options.metrics === false ? false : { prefix: '', ...defined(options.metrics) },
    replayCache: cache && {
      maxEntries: aPositiveInteger(cache.maxEntries, 'replayCache.maxEntries'),
      maxBytes: aPositiveInteger(cache.maxBytes, 'replayCache.maxBytes'),
      maxAgeMs: milliseconds(cache.maxAge, 'replayCache.maxAge', { minMs: 1, maxMs: MAX_TTL_MS }),
    },
  };
}

type RouteOptionsWithDefaults = IdempotentRouteOptions &
  Required<Pick<IdempotentRouteOptions, keyof typeof ROUTE_DEFAULTS>>;

function routeSettings(
  module: IdempotencySettings,
  route: RouteOptionsWithDefaults,
  handler: string,
  controller?: object,
): RouteSettings {
  const keyFormat = route.keyFormat === undefined ? module.keyFormat : aKeyFormat(route.keyFormat);
  return {
    handler,
    required: aBoolean(route.required, 'required'),
    caller: route.caller === undefined ? module.caller : aCaller(route.caller),
    ...executionSettings(module, route),
    problemLink: module.problemLink,
    keys: acceptedKeys(keyFormat),
    fingerprint: aFingerprint(route.fingerprint),
    storeResponse:
      route.storeResponse === undefined ? module.storeResponse : aFunction(route.storeResponse, 'storeResponse'),
    retryAfterSeconds:
      route.retryAfterSeconds === undefined
        ? module.retryAfterSeconds
        : aPositiveInteger(route.retryAfterSeconds, 'retryAfterSeconds'),
    maxResponseBytes:
      route.maxResponseBytes === undefined
        ? module.maxResponseBytes
        : aPositiveInteger(route.maxResponseBytes, 'maxResponseBytes'),
    waitMs: milliseconds(route.wait, 'wait', { maxMs: MAX_TIMER_MS }),
    scopedByHost: controller !== undefined && Reflect.getMetadata(HOST_METADATA, controller) !== undefined,
    redaction: aRedaction(route.redact),
    expiryHeader: route.expiryHeader === undefined ? module.expiryHeader : aBoolean(route.expiryHeader, 'expiryHeader'),
    namedCaller: typeof route.caller === 'string',
  };
}
