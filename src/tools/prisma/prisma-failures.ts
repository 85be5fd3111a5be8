/** The socket failures `@prisma/adapter-pg` reports by kind alone, as the error codes they stand for. */
const KIND_CODES: Record<string, string> = {
  DatabaseNotReachable: 'ECONNREFUSED',
  ConnectionClosed: 'ECONNRESET',
  SocketTimeout: 'ETIMEDOUT',
};

/**
 * The driver's error inside an error of Prisma's: a `PrismaClientKnownRequestError` carries the
 * driver adapter's (`meta.driverAdapterError`), whose `cause` holds PostgreSQL's SQLSTATE
 * (`originalCode`, or `code` for one Prisma has no kind for) and message, or a socket failure's
 * kind. `undefined` for anything else (a driver error Prisma passed on as it is is read as it is).
 */
export function prismaDriverError(error: unknown): { code?: string; message?: string } | undefined {
  const adapterError =
    (error as { meta?: { driverAdapterError?: unknown } })?.meta?.driverAdapterError ??
    ((error as { name?: unknown })?.name === 'DriverAdapterError' ? error : undefined);
  const cause = (adapterError as { cause?: Record<string, unknown> } | undefined)?.cause;
  if (cause === null || typeof cause !== 'object') return undefined;
  const code = [
    cause.originalCode,
    cause.kind === 'postgres' ? cause.code : undefined,
    KIND_CODES[String(cause.kind)],
  ].find((candidate): candidate is string => typeof candidate === 'string');
  const message = [cause.originalMessage, cause.message].find(
    (candidate): candidate is string => typeof candidate === 'string',
  );
  return code === undefined && message === undefined ? undefined : { code, message };
}
