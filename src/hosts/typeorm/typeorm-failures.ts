import { type DatabaseFailure, DatabaseUnavailableError } from '../database-failures.js';
import { postgresFailure } from '../wire/postgres-failures.js';

/**
 * What an error TypeORM threw says of the database, as the port's failure: a `QueryFailedError`
 * by the node-postgres error it carries (`driverError`), and a QueryRunner TypeORM released when
 * its connection failed (`QueryRunnerAlreadyReleasedError`, which carries no code: the module
 * never releases a held key's QueryRunner while its handler runs) as unavailability.
 */
export function typeOrmFailure(error: unknown): DatabaseFailure | undefined {
  if ((error as { name?: unknown })?.name === 'QueryRunnerAlreadyReleasedError')
    return new DatabaseUnavailableError(error, undefined);
  return postgresFailure((error as { driverError?: unknown })?.driverError ?? error);
}
