import { DatabaseUnavailableError, LostRaceError, RefusedByDatabaseError } from '../../src/hosts/database-failures.js';
import { typeOrmFailure } from '../../src/hosts/typeorm/typeorm-failures.js';
import { prismaDriverError } from '../../src/tools/prisma/prisma-failures.js';
import { postgresFailure, translated } from '../../src/hosts/wire/postgres-failures.js';

/**
 * How the adapters read a database error as the port's failure: unavailable (a 503 to retry), a
 * lost race, or a refusal a retry meets again; from a node-postgres error, a TypeORM one, or a
 * tool's wrapper of either.
 */
describe('database failures', () => {
  const pg = (code: string) => Object.assign(new Error(`failed with ${code}`), { code });
  const typeorm = (code: string) => Object.assign(new Error('QueryFailedError'), { driverError: pg(code) });
  const drizzle = (code: string) =>
    Object.assign(new Error('Failed query: insert into payments …'), { cause: pg(code) });
  const readings = (code: string) => [
    postgresFailure(pg(code)),
    typeOrmFailure(typeorm(code)),
    typeOrmFailure(pg(code)),
    postgresFailure(drizzle(code)),
  ];

  it.each([
    ['08006', 'connection failure'],
    ['53300', 'too many connections'],
    ['57P01', 'admin shutdown'],
    ['57014', 'statement timeout'],
    ['55P03', 'lock timeout'],
    ['26000', 'a prepared statement gone with its server session'],
    ['25006', 'a read-only server (a primary demoted by a failover)'],
  ])('%s (%s) is unavailability, not a refusal', (code) => {
    for (const failure of readings(code)) {
      expect(failure).toBeInstanceOf(DatabaseUnavailableError);
      expect(failure).not.toBeInstanceOf(RefusedByDatabaseError);
      expect(failure?.sqlState).toBe(code);
    }
  });

  it.each(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT'])(
    'a socket that failed (%s) is unavailability',
    (errno) => {
      expect(postgresFailure(Object.assign(new Error(errno), { code: errno }))).toBeInstanceOf(
        DatabaseUnavailableError,
      );
    },
  );

  it.each([
    'timeout exceeded when trying to connect',
    'Connection terminated unexpectedly',
    'Client was closed and is not queryable',
  ])('a pool or client that says "%s" is unavailability', (message) => {
    expect(postgresFailure(new Error(message))).toBeInstanceOf(DatabaseUnavailableError);
    expect(typeOrmFailure(new Error(message))).toBeInstanceOf(DatabaseUnavailableError);
  });

  it('a QueryRunner TypeORM released when its connection failed is unavailability (it carries no code)', () => {
    const released = Object.assign(new Error('Query runner already released. Cannot run queries anymore.'), {
      name: 'QueryRunnerAlreadyReleasedError',
    });
    expect(typeOrmFailure(released)).toBeInstanceOf(DatabaseUnavailableError);
  });

  it('a row of the partitioned key table with no partition for its expiry yet (23514) is unavailability, in any lc_messages: the next sweep creates it', () => {
    // PostgreSQL names the table and no constraint; the message text depends on the server's lc_messages.
    const fields = { code: '23514', table: 'idempotency_keys', schema: 'public' };
    const english = Object.assign(new Error('no partition of relation "idempotency_keys" found for row'), fields);
    const german = Object.assign(
      new Error('keine Partition von Relation »idempotency_keys« für die Zeile gefunden'),
      fields,
    );
    for (const error of [english, german]) {
      expect(postgresFailure(error)).toBeInstanceOf(DatabaseUnavailableError);
      expect(typeOrmFailure({ driverError: error })).toBeInstanceOf(DatabaseUnavailableError);
    }
  });

  it('a CHECK constraint of the key table (23514 naming a constraint) stays a refusal', () => {
    const check = Object.assign(
      new Error('new row for relation "idempotency_keys" violates check constraint "idempotency_keys_state_check"'),
      {
        code: '23514',
        table: 'idempotency_keys',
        constraint: 'idempotency_keys_state_check',
      },
    );
    expect(postgresFailure(check)).toBeInstanceOf(RefusedByDatabaseError);
  });

  it.each(['40001', '40P01'])('%s is a lost race: neither unavailability nor a refusal', (code) => {
    for (const failure of readings(code)) {
      expect(failure).toBeInstanceOf(LostRaceError);
      expect(failure).not.toBeInstanceOf(DatabaseUnavailableError);
      expect(failure).not.toBeInstanceOf(RefusedByDatabaseError);
    }
  });

  it.each(['23505', '23514', '25P02', '22012'])('%s is a refusal a retry meets again', (code) => {
    for (const failure of readings(code)) {
      expect(failure).toBeInstanceOf(RefusedByDatabaseError);
      expect(failure?.sqlState).toBe(code);
    }
  });

  it("is nothing of the database's for an error without a code or a known message, and keeps the driver's error as its cause", () => {
    expect(postgresFailure(new TypeError('x is not a function'))).toBeUndefined();
    expect(typeOrmFailure(new Error('EntityMetadataNotFoundError'))).toBeUndefined();
    const error = pg('57P01');
    expect(postgresFailure(error)?.cause).toBe(error);
    expect(postgresFailure(error)?.message).toBe(error.message);
  });

  it('translated() passes a failure already read, and an error that is not the database’s, through unchanged', () => {
    const failure = new DatabaseUnavailableError(pg('08006'), '08006');
    expect(translated(failure)).toBe(failure);
    const bug = new TypeError('x is not a function');
    expect(translated(bug)).toBe(bug);
    expect(translated(pg('40001'))).toBeInstanceOf(LostRaceError);
  });
});

describe("Prisma's errors, read through the driver adapter's error they carry", () => {
  const known = (cause: object) =>
    Object.assign(new Error('Invalid `prisma.payment.create()` invocation'), {
      code: 'P2034',
      meta: { driverAdapterError: { name: 'DriverAdapterError', cause } },
    });

  it.each([
    [
      { kind: 'TransactionWriteConflict', originalCode: '40001', originalMessage: 'could not serialize access' },
      LostRaceError,
    ],
    [
      { kind: 'postgres', code: '57014', message: 'canceling statement due to statement timeout' },
      DatabaseUnavailableError,
    ],
    [
      { kind: 'TooManyConnections', originalCode: '53300', originalMessage: 'too many clients' },
      DatabaseUnavailableError,
    ],
    [{ kind: 'ConnectionClosed' }, DatabaseUnavailableError],
    [{ kind: 'DatabaseNotReachable', host: '127.0.0.1', port: 1 }, DatabaseUnavailableError],
    [
      { kind: 'UniqueConstraintViolation', originalCode: '23505', originalMessage: 'duplicate key' },
      RefusedByDatabaseError,
    ],
  ])('%o is a %p', (cause, failure) => {
    expect(postgresFailure(prismaDriverError(known(cause)))).toBeInstanceOf(failure);
  });

  it('is nothing for an error with no driver adapter error (one of the module’s, passed on as it is)', () => {
    expect(prismaDriverError(new Error('a query from outside the key’s transaction'))).toBeUndefined();
  });
});
