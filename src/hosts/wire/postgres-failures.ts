import {
  DatabaseFailure,
  DatabaseUnavailableError,
  LostRaceError,
  RefusedByDatabaseError,
} from '../database-failures.js';

/** SQLSTATE classes and codes that mean "the database is unavailable right now", not "bad request". */
const UNAVAILABLE_CODE = /^(08|53|57P0)|^57014$|^55P03$|^26000$|^25006$/;
const UNAVAILABLE_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT']);
const UNAVAILABLE_MESSAGE =
  /timeout exceeded when trying to connect|Connection terminated|connection error and is not queryable|Client was closed/i;

/** A serialization failure or a deadlock: the transaction lost a race, and a retry may not. */
const LOST_RACE_CODE = /^(40001|40P01)$/;

/** An SQLSTATE: five digits or capital letters. */
const SQLSTATE = /^[0-9A-Z]{5}$/;

/** How deep a chain of `cause`s is followed to the driver's error. */
const MAX_CAUSES = 5;

/** The fields of a node-postgres error (or a socket's) that say what failed. */
interface PgErrorFields {
  code?: unknown;
  message?: unknown;
  table?: unknown;
  constraint?: unknown;
  cause?: unknown;
}

/**
 * A row of the key table with no partition for its expiry (23514, as a CHECK violation, but
 * naming the table and no constraint): told by its fields, whatever the server's `lc_messages`.
 */
function isMissingPartition({ code, table, constraint }: PgErrorFields): boolean {
  return code === '23514' && table === 'idempotency_keys' && constraint === undefined;
}

/**
 * What a node-postgres error (a server's error, a pool's, a socket's), or the first error of its
 * `cause` chain that carries a code (a tool's wrapper: Drizzle's `DrizzleQueryError`), says of the
 * database, as the port's failure; `undefined` when none of the chain is the database's.
 *
 * Unavailable: connection exceptions (08), insufficient resources (53), shutdown (57P0x),
 * statement timeout (57014), lock timeout (55P03), a server that only reads now (25006, a primary
 * demoted by a failover), a prepared statement missing from a server session that changed under
 * the connection (26000, a pooler), no partition of the partitioned key table for the row's
 * expiry yet (23514: the sweep that creates them is late), a pool that gave up waiting for a
 * connection, a dropped socket. A lost race: 40001, 40P01. Refused: any other SQLSTATE.
 */
export function postgresFailure(error: unknown): DatabaseFailure | undefined {
  for (let cause = error, depth = 0; cause !== null && typeof cause === 'object' && depth <= MAX_CAUSES; depth++) {
    const fields = cause as PgErrorFields;
    const failure = failureOf(fields, error);
    if (failure) return failure;
    cause = fields.cause;
  }
  return undefined;
}

function failureOf(fields: PgErrorFields, error: unknown): DatabaseFailure | undefined {
  const { code, message } = fields;
  const sqlState = typeof code === 'string' && SQLSTATE.test(code) ? code : undefined;
  if (sqlState !== undefined && LOST_RACE_CODE.test(sqlState)) return new LostRaceError(error, sqlState);
  if (typeof code === 'string' && (UNAVAILABLE_CODE.test(code) || UNAVAILABLE_ERRNO.has(code)))
    return new DatabaseUnavailableError(error, sqlState);
  if (isMissingPartition(fields)) return new DatabaseUnavailableError(error, sqlState);
  if (sqlState !== undefined) return new RefusedByDatabaseError(error, sqlState);
  if (typeof message === 'string' && UNAVAILABLE_MESSAGE.test(message))
    return new DatabaseUnavailableError(error, undefined);
  return undefined;
}

/**
 * `error` as the port's failure when it is the database's (read by `failureOf`), else itself:
 * what an adapter throws from the port's methods.
 */
export function translated(
  error: unknown,
  failureOf: (error: unknown) => DatabaseFailure | undefined = postgresFailure,
): unknown {
  return error instanceof DatabaseFailure ? error : (failureOf(error) ?? error);
}

/**
 * How a host reads its handlers' errors: `postgresFailure` over the error, after the ways tools
 * registered to reach the driver's error inside their own (`DatabaseHost.readFailuresThrough`).
 */
export class FailureReading {
  private readonly unwrappers: Array<(error: unknown) => unknown> = [];

  constructor(private readonly read: (error: unknown) => DatabaseFailure | undefined = postgresFailure) {}

  through(unwrap: (error: unknown) => unknown): void {
    this.unwrappers.push(unwrap);
  }

  failureOf(error: unknown): DatabaseFailure | undefined {
    for (const unwrap of this.unwrappers) {
      const inner = unwrap(error);
      const failure = inner === undefined ? undefined : this.read(inner);
      if (failure) return failure;
    }
    return this.read(error);
  }
}
