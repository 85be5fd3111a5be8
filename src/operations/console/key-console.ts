import type { Statement, StatementResult } from '../../hosts/database-host.js';
import { type KeyStorage, scopeKey } from '../../key/scoped-key.js';
import { COUNT_BY_STATE, EXPIRE_KEY, IN_PROGRESS, KEY_ROWS } from './key-console.sql.js';
import { IdempotencyError } from '../../idempotency.errors.js';

/** One key's row as a console shows it: no stored body, no stored header. */
export interface KeyReport {
  /**
   * `METHOD /path`; with `storage.keys: 'digest'`, its digest (`sha256:…`) unless the query
   * named the endpoint.
   */
  endpoint: string;
  state: 'in_progress' | 'completed';
  /** The request's SHA-256, hex. */
  fingerprint: string;
  /** The stored answer's status code (`null` while in progress). */
  status: number | null;
  createdAt: string;
  expiresAt: string;
  /** A lease's end (lease mode), else `null`. */
  lockedUntil: string | null;
  ageMs: number;
  /** Past its ttl (or an ended lease past it): the next request with the key runs. */
  expired: boolean;
  /** With a tombstone: when its answer goes (or went), after which a retry runs nothing until `expiresAt`; else `null`. */
  responseExpiresAt: string | null;
  /** Past its ttl and kept as a tombstone: a retry runs nothing, its answer gone. */
  tombstone: boolean;
}

/** A key in progress, with the columns that name it (digests with `storage.keys: 'digest'`). */
export interface InProgressKey extends KeyReport {
  key: string;
  caller: string;
}

/** How many rows there are in one state. */
export interface StateCount {
  state: 'in_progress' | 'completed';
  expired: boolean;
  rows: number;
}

/** Which key, as support knows it: the caller's id and the client's key, and the endpoint where it matters. */
export interface KeyQuery {
  caller: string;
  key: string;
  /** `METHOD /path`, as the endpoint is stored (`POST /payments`). */
  endpoint?: string;
}

/** A key the console was asked about that does not make sense: it names the problem for the person who typed it. */
export class KeyConsoleInputError extends IdempotencyError {}

/** The key the console was asked to change has no row (never recorded, swept, or a table with digested keys asked in clear). */
export class KeyNotFoundError extends KeyConsoleInputError {}

/** What a console runs its statements with. */
export type RunStatement = (statement: Statement) => Promise<StatementResult>;

/** A key of this length or made of other bytes could never have been stored. */
const STORABLE_KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * The key console's work, on any way of running a statement (`IdempotencyKeyConsole` runs it on
 * the module's host; the CLI on a client of its own): look a key up, list keys in progress, expire
 * one key, count rows by state. Keys and callers are turned into the row's columns as `storage`
 * writes them, so the console works on digested tables too.
 */
export class KeyConsole {
  constructor(
    private readonly run: RunStatement,
    private readonly storage: KeyStorage,
  ) {}

  /**
   * The rows of a caller's key (one per endpoint it was used on). A table with digested keys
   * stores each endpoint as its digest: a row of the endpoint the query names shows that name.
   */
  async lookup(query: KeyQuery): Promise<KeyReport[]> {
    const stored = this.rowOf(query);
    const named = namedEndpoint(query, stored);
    return (await this.storedRows(stored)).map((row) => shownAs(row, named));
  }

  /** Lease-mode keys in progress since longer than `olderThanMs`, the oldest first. */
  async inProgress(olderThanMs: number, limit = 100): Promise<InProgressKey[]> {
    if (!Number.isSafeInteger(olderThanMs) || olderThanMs < 0)
      throw new KeyConsoleInputError(`a duration must be 0 ms or more, got ${olderThanMs}`);
    if (!Number.isSafeInteger(limit) || limit < 1)
      throw new KeyConsoleInputError(`a limit must be a positive integer, got ${limit}`);
    const { rows } = await this.run([IN_PROGRESS, [olderThanMs, limit]]);
    return rows.map((row) => ({ key: row.key, caller: row.caller, ...report(row) }));
  }

  /**
   * Expires one key now, so that its next request runs (a completed key: its outcome is no longer
   * replayed; a lease in progress: it can be taken over at once, even while its holder still
   * runs). Without `endpoint`, the key must have a row on one endpoint only. Returns the row.
   */
  async expire(query: KeyQuery): Promise<KeyReport> {
    const stored = this.rowOf(query);
    const found = await this.storedRows(stored);
    if (found.length === 0)
      throw new KeyNotFoundError(
        `no row for key ${JSON.stringify(query.key)} of caller ${JSON.stringify(query.caller)}`,
      );
    if (found.length > 1 && query.endpoint === undefined) {
      throw new KeyConsoleInputError(
        `the key has rows on ${found.length} endpoints (${found.map((row) => row.endpoint).join(', ')}): name one with its endpoint`,
      );
    }
    const { rows } = await this.run([EXPIRE_KEY, [stored.key, stored.caller, found[0]!.endpoint]]);
    if (rows.length === 0)
      throw new KeyConsoleInputError(`the key's row was gone before it could be expired (swept or taken over)`);
    return shownAs(rows[0], namedEndpoint(query, stored));
  }

  /** How many rows the table holds, by state and whether they expired. */
  async counts(): Promise<StateCount[]> {
    const { rows } = await this.run([COUNT_BY_STATE, []]);
    return rows.map((row) => ({ state: row.state, expired: row.expired, rows: Number(row.rows) }));
  }

  /** The key's rows as stored (their endpoint column a digest on a table with digested keys). */
  private async storedRows({ key, caller, endpoint }: StoredQuery): Promise<Record<string, any>[]> {
    return (await this.run([KEY_ROWS, [key, caller, endpoint ?? null]])).rows;
  }

  /** The query's key, caller and endpoint as the rows store them. */
  private rowOf({ key, caller, endpoint }: KeyQuery): StoredQuery {
    if (typeof key !== 'string' || !STORABLE_KEY.test(key)) {
      throw new KeyConsoleInputError(`a key is 1 to 255 printable ASCII characters, got ${JSON.stringify(key)}`);
    }
    if (typeof caller !== 'string')
      throw new KeyConsoleInputError("a caller is the id the app resolves for the request ('' for the shared scope)");
    if (endpoint !== undefined && !/^[A-Z]+ \S/.test(endpoint) && !endpoint.startsWith('sha256:')) {
      throw new KeyConsoleInputError(
        `an endpoint is METHOD /path, as stored (POST /payments), got ${JSON.stringify(endpoint)}`,
      );
    }
    const row = scopeKey(key, caller, endpoint ?? '', this.storage).row;
    const storedEndpoint = endpoint === undefined || endpoint.startsWith('sha256:') ? endpoint : row.endpoint;
    return { key: row.key, caller: row.caller, endpoint: storedEndpoint };
  }
}

function report(row: Record<string, any>): KeyReport {
  return {
    endpoint: row.endpoint,
    state: row.state,
    fingerprint: row.fingerprint,
    status: row.status,
    createdAt: new Date(row.created_at).toISOString(),
    expiresAt: new Date(row.expires_at).toISOString(),
    lockedUntil: row.locked_until ? new Date(row.locked_until).toISOString() : null,
    ageMs: Number(row.age_ms),
    expired: row.expired,
    responseExpiresAt: row.response_expires_at ? new Date(row.response_expires_at).toISOString() : null,
    tombstone: row.tombstone && !row.expired,
  };
}

/** A query's key, caller and endpoint as the rows store them. */
interface StoredQuery {
  key: string;
  caller: string;
  endpoint?: string;
}

/** The endpoint the query names, by its name and as the rows store it; none when it names none by name. */
function namedEndpoint(query: KeyQuery, stored: StoredQuery): NamedEndpoint | undefined {
  if (query.endpoint === undefined || query.endpoint.startsWith('sha256:')) return undefined;
  return { name: query.endpoint, stored: stored.endpoint };
}

/** An endpoint the console was asked about by its name, and how the rows store it (its digest, on a table with digested keys). */
interface NamedEndpoint {
  name: string;
  stored: string | undefined;
}

/** A stored row as the console shows it: the endpoint by the name the query gave, where it is that one's digest. */
function shownAs(row: Record<string, any>, named: NamedEndpoint | undefined): KeyReport {
  const shown = report(row);
  return named !== undefined && row.endpoint === named.stored ? { ...shown, endpoint: named.name } : shown;
}
