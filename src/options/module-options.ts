import type { OutboxOptions } from './outbox-options.js';
import type { ExecutionContext } from '@nestjs/common';
import type { KeyFormat } from '../key/key-format.js';
import type { KeyStorage } from '../key/scoped-key.js';
import type { Duration } from './duration.js';

/** Decides from the status code the client received whether an outcome is stored and replayed. */
export type StorePolicy = (status: number) => boolean;

/**
 * Returns the authenticated caller's id (a string or a finite number), or `undefined` when the
 * request has none. Any other value fails the request with a 500: it cannot tell callers apart.
 */
export type CallerResolver = (request: any, context: ExecutionContext) => string | number | bigint | undefined | null;

/** Bounds of the in-process cache of completed outcomes; `false` turns it off. */
export interface ReplayCacheOptions {
  /** Default: `10_000`. */
  maxEntries?: number;
  /** Body and header bytes held at most. Default: 32 MiB. */
  maxBytes?: number;
  /**
   * How long an outcome is replayed from memory before the table is read again (never past the key's expiry):
   * a key expired from outside (the key console) is replayed here no longer than this. Default: `'1m'`.
   */
  maxAge?: Duration;
}

/**
 * A TypeORM DataSource, as far as the module needs to know it here (the TypeORM adapter checks
 * the rest): the type keeps `typeorm` out of the options' public types.
 */
export interface DataSourceLike {
  createQueryRunner(mode?: 'master' | 'slave'): unknown;
  readonly manager: unknown;
}

/** A node-postgres `Pool`, as far as the module uses it (its public API). */
export interface PgPoolLike {
  connect(): Promise<unknown>;
  readonly options: object;
  on(event: 'error', listener: (error: Error) => void): unknown;
  end(): Promise<void>;
}

/** One AES-256 key of `storage.encryption.keys`. */
export interface OutcomeEncryptionKey {
  /** Its id, stored in every row it seals (1–64 printable ASCII characters). */
  id: string;
  /** Its 32 bytes: a Buffer, or their base64 text. */
  key: Buffer | string;
}

/** What the key table stores, and how (docs/storage.md). */
export interface StorageOptions {
  /**
   * How a row names its key: `'clear'` stores the key and the caller as sent; `'digest'` stores
   * only a SHA-256 of both (`sha256:` and 64 hex digits in `key`, `''` in `caller`), so a dump or
   * a replica shows no client's key. Lookups, conflicts, replays and sweeping are the same.
   * Switching a table that holds rows needs the digesting migration first (docs/storage.md). Default: `'clear'`.
   */
  keys?: KeyStorage;
  /**
   * Seals each stored response's headers and body with AES-256-GCM. Rows are sealed with the
   * first key and opened with whichever key their id names, so a new key goes first and the old
   * ones stay listed until `IdempotencyResealer` has resealed their rows. Default: none (clear).
   */
  encryption?: { keys: readonly OutcomeEncryptionKey[] };
}

/** What a route's stored outcome leaves out: its replays answer without it. */
export interface RedactionOptions {
  /** Response header names, never stored. */
  headers?: readonly string[];
  /** Field paths (`'card.number'`) removed from a JSON response body before it is stored. */
  body?: readonly string[];
}

/** Options of `IdempotencyModule.forRoot()` / `forRootAsync()`. Every field has a default. */
export interface IdempotencyModuleOptions {
  /**
   * A node-postgres `Pool` holding `idempotency_keys` and your business tables, for an app with no
   * TypeORM (Drizzle on node-postgres: `nestjs-pg-idempotency/drizzle`): the module runs its key
   * transactions on it, and `dataSource` and `typeormAccess` do not apply. Default: none (TypeORM).
   */
  pool?: PgPoolLike;
  /**
   * The TypeORM DataSource that holds both `idempotency_keys` and your business tables: the name
   * of a `TypeOrmModule` connection, or a DataSource instance. Default: `'default'`.
   */
  dataSource?: string | DataSourceLike;
  /**
   * How the module reaches TypeORM's transaction: `'auto'` (default) uses the QueryRunner's
   * transaction state directly, sending `START TRANSACTION` and `COMMIT` together with the key's
   * statements, once a startup check on a real QueryRunner found that state shaped as expected,
   * and otherwise TypeORM's public API only (two more round trips per request, same guarantees);
   * `'public-api'` always uses the public API.
   */
  typeormAccess?: 'auto' | 'public-api';
  /** How long a completed key is replayed. Default: `'24h'`. */
  ttl?: Duration;
  /** Which keys are accepted. Default: `'uuid-or-ulid'`. */
  keyFormat?: KeyFormat;
  /**
   * The absolute URL of your API's documentation of its idempotency errors: every problem
   * response the module sends then carries `Link: <url>; rel="describedby"`, as the
   * Idempotency-Key draft asks. Default: none (the problems' `type` URNs name them, and link nowhere).
   */
  problemDocumentation?: string;
  /** The caller a key belongs to. Default: `request.user.id`, else `.sub`, else a string `request.user`. */
  caller?: CallerResolver;
  /**
   * What happens when `caller` finds nobody: `'reject'` answers 401 (no response is ever shared
   * between unidentified callers); `'shared'` puts all of them in one scope. Default: `'reject'`.
   */
  anonymousCallers?: 'reject' | 'shared';
  /** Response headers replayed besides the built-in allow-list. Set-Cookie never is. Default: `[]`. */
  replayHeaders?: readonly string[];
  /**
   * Whether every keyed answer (first and replayed, and a tombstone's) carries
   * `Idempotency-Key-Expires`, the HTTP-date until which the key is kept: a retry after it is a new
   * request. A route's `expiryHeader` overrides it. Default: `false`.
   */
  expiryHeader?: boolean;
  /** `Retry-After` (seconds) of a 409 while the first request is in flight. Default: `1`. */
  retryAfterSeconds?: number;
  /** Which outcomes are stored. Default: 2xx, 3xx and 4xx except 408, 409, 425 and 429; never 5xx. */
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
  /**
   * On the partitioned table (`CreatePartitionedIdempotencyKeys1795996800000`), the span of
   * expiry times each partition holds: the sweeper drops a partition once all of it is past, so
   * an expired key stays in the table up to this long after its expiry (treated as absent all the
   * while), and every lookup reads one index per partition (the ttl's span over this one, plus
   * two). Partitions start at whole multiples of it since 1970 (UTC). Ignored on the plain table.
   * Default: a quarter of `ttl`, at least one minute.
   */
  partitionInterval?: Duration;
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
  /**
   * How long the shutdown waits for keys in flight to finish (`app.close()`, SIGTERM with
   * `enableShutdownHooks()`), once it stopped taking new ones; `0` does not wait. Default: `'10s'`.
   */
  drainTimeout?: Duration;
  /**
   * OpenTelemetry spans and metrics through `@opentelemetry/api`, when it is installed (an
   * optional peer): `false` turns them off. Default: `true`.
   */
  openTelemetry?: boolean;
  /** What the key table stores: keys in clear or as digests, outcomes in clear or sealed. Default: in clear. */
  storage?: StorageOptions;
  /**
   * Whether the app refuses to start when its database answers without the module's tables
   * (`idempotency_keys`, and `idempotency_outbox` with the outbox), naming the migration to run.
   * `false` starts anyway (tables created after the app starts): each key is then answered with a
   * 500 `store-not-migrated` problem until they exist, never a 503. Default: `true`.
   */
  checkTables?: boolean;
  /** The outbox: messages `IdempotencyOutbox.stage()` commits with the key, published after (docs/outbox.md). */
  outbox?: OutboxOptions;
}
