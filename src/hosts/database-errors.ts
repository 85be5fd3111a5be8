/** SQLSTATE classes and codes that mean "the database is unavailable right now", not "bad request". */
const UNAVAILABLE_CODE = /^(08|53|57P0)|^57014$|^55P03$|^26000$|^25006$/;
const UNAVAILABLE_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT']);
const UNAVAILABLE_MESSAGE =
  /timeout exceeded when trying to connect|Connection terminated|connection error and is not queryable|Client was closed/i;

/**
 * A row of the key table with no partition for its expiry (23514, as a CHECK violation, but
 * naming the table and no constraint): told by its fields, whatever the server's `lc_messages`.
 */
function isMissingPartition({ code, table, constraint }: { code?: unknown; table?: unknown; constraint?: unknown }): boolean {
  return code === '23514' && table === 'idempotency_keys' && constraint === undefined;
}

/** A serialization failure or a deadlock: the transaction lost a race, and a retry may not. */
const CONFLICT_CODE = /^(40001|40P01)$/;

/** The SQLSTATE of a `pg` error, or of the driver error a TypeORM `QueryFailedError` carries. */
export function sqlState(error: unknown): unknown {
  return ((error as { driverError?: { code?: unknown } })?.driverError ?? (error as { code?: unknown }))?.code;
}

/** Whether `error` is a serialization failure or a deadlock (40001, 40P01): a retry may succeed. */
export function isLostRace(error: unknown): boolean {
  const code = sqlState(error);
  return typeof code === 'string' && CONFLICT_CODE.test(code);
}

/**
 * Whether PostgreSQL refused the statement for what it is (a constraint checked at COMMIT, a
 * transaction already aborted by a failed statement): an SQLSTATE a retry meets again, unlike
 * unavailability or a lost race. Anything else (a timeout, a dropped connection) is not.
 */
export function isRefusedByDatabase(error: unknown): boolean {
  const code = sqlState(error);
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !CONFLICT_CODE.test(code) && !isDatabaseUnavailable(error);
}

/**
 * Whether `error` (a TypeORM `QueryFailedError`, a `pg` error or a pool error) says the database
 * is unreachable, overloaded or timed out: connection exceptions (08), insufficient resources
 * (53), shutdown (57P0x), statement timeout (57014), lock timeout (55P03), a server that only
 * reads now (25006, a primary demoted by a failover), a prepared statement missing from a server
 * session that changed under the connection (26000, a pooler), no partition of the partitioned
 * key table for the row's expiry yet (23514: the sweep that creates them is late), a pool that
 * gave up waiting for a connection, a dropped socket, or a QueryRunner TypeORM released when its
 * connection failed (`QueryRunnerAlreadyReleasedError`, which carries no code: the module never
 * releases a held key's QueryRunner while its handler runs). Such failures are answered 503:
 * retry later.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if ((error as { name?: unknown })?.name === 'QueryRunnerAlreadyReleasedError') return true;
  const cause = (error as { driverError?: unknown })?.driverError ?? error;
  const { code, message } = (cause ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (UNAVAILABLE_CODE.test(code) || UNAVAILABLE_ERRNO.has(code))) return true;
  if (isMissingPartition(cause ?? {})) return true;
  return typeof message === 'string' && UNAVAILABLE_MESSAGE.test(message);
}
