import type { ModuleRef } from '@nestjs/core';
import type { DataSource } from 'typeorm';
import { IdempotencyConfigurationError } from '../../idempotency.errors.js';
import type { DataSourceLike } from '../../options/module-options.js';

/**
 * The app's TypeORM DataSource: `dataSource` itself, or the `TypeOrmModule` connection of that
 * name (`'default'` for the unnamed one).
 */
export async function resolveDataSource(
  dataSource: string | DataSourceLike,
  moduleRef: ModuleRef,
): Promise<DataSource> {
  if (typeof dataSource !== 'string') {
    if (typeof dataSource?.createQueryRunner === 'function') return dataSource as unknown as DataSource;
    throw new IdempotencyConfigurationError(
      'option "dataSource" must be the name of a TypeORM connection or a DataSource',
    );
  }
  const { getDataSourceToken } = await import('@nestjs/typeorm').catch((error: unknown) => {
    throw new IdempotencyConfigurationError(
      `IdempotencyModule has no database: pass { pool } (the node-postgres Pool your app writes through; ` +
        `with Prisma, Drizzle or @nestjs-cls/transactional on pg, the Pool their adapter uses) or ` +
        `{ dataSource } (a TypeORM DataSource) to IdempotencyModule.forRoot(). Without either it looks ` +
        `for TypeOrmModule's "${dataSource}" connection, and @nestjs/typeorm is not installed.`,
      { cause: error },
    );
  });
  try {
    return moduleRef.get<DataSource>(getDataSourceToken(dataSource), { strict: false });
  } catch {
    throw new IdempotencyConfigurationError(
      `no TypeORM DataSource named "${dataSource}" was found. Import TypeOrmModule.forRoot() ` +
        `(with that name) before IdempotencyModule, or pass { dataSource } to IdempotencyModule.forRoot(); ` +
        `an app on Prisma, Drizzle or a node-postgres Pool passes { pool } instead.`,
    );
  }
}
