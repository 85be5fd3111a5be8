/** SQLSTATE classes and codes that mean "the database is unavailable right now", not "bad request". */
const UNAVAILABLE_CODE = /^(08|53|57P0)|^57014$|^55P03$/;
const UNAVAILABLE_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT']);
const UNAVAILABLE_MESSAGE =
  /timeout exceeded when trying to connect|Connection terminated|connection error and is not queryable|Client was closed/i;

/**
 * Whether `error` (a TypeORM `QueryFailedError`, a `pg` error or a pool error) says the database
 * is unreachable, overloaded or timed out: connection exceptions (08), insufficient resources
 * (53), shutdown (57P0x), statement timeout (57014), lock timeout (55P03), a pool that gave up
 * waiting for a connection, a dropped socket. Such failures are answered 503: retry later.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const cause = (error as { driverError?: unknown })?.driverError ?? error;
  const { code, message } = (cause ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (UNAVAILABLE_CODE.test(code) || UNAVAILABLE_ERRNO.has(code))) return true;
  return typeof message === 'string' && UNAVAILABLE_MESSAGE.test(message);
}
