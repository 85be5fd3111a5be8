import { IdempotencyConfigurationError } from '../../idempotency.errors.js';
import type { ModuleTable } from './module-tables.js';

/**
 * The database answers without a table the module needs (or with one that lacks columns it
 * uses): a migration was not run. Thrown at bootstrap (unless `checkTables: false`) and by a
 * reservation that meets a missing table; no retry helps, so it is never answered as "retry
 * later". `missing` says what is missing; the message names each way to create it.
 */
export class TablesNotMigratedError extends IdempotencyConfigurationError {
  constructor(
    readonly missing: readonly string[],
    tables: readonly ModuleTable[],
    options?: { cause?: unknown },
  ) {
    const flags = tables.map((table) => table.cliFlags).join('');
    super(
      `${missing.join('; ')}: run the migration before the app starts, with DATABASE_URL set: ` +
        `\`npx nestjs-pg-idempotency migrate${flags}\`; or add ${tables.map((table) => table.migrationClass).join(' and ')} ` +
        `to your TypeORM DataSource's migrations; or apply ${tables
          .map((table) => `node_modules/nestjs-pg-idempotency/migrations/${table.sqlFile}`)
          .join(' and ')} (docs/operations.md#migration). ` +
        'checkTables: false lets the app start without them.',
      options,
    );
  }
}
