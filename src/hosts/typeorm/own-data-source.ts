import type { DataSource, DataSourceOptions } from 'typeorm';
import type { PooledConnection } from '../wire/bounded-statement.js';
import { OWN_POOL_SIZE, type PoolKind } from '../wire/own-pool.js';
import type { PgClient } from '../wire/pg-client.js';

/**
 * The module's own pool beside the app's DataSource, as TypeORM opens one: a second DataSource of
 * the same TypeORM, with the app's connection options, no entities and `OWN_POOL_SIZE` connections.
 */
export function ownDataSource(app: DataSource): PoolKind<DataSource> {
  return {
    open: () => {
      const options = app.options as DataSourceOptions & { extra?: Record<string, unknown> };
      const OwnDataSource = app.constructor as new (options: DataSourceOptions) => DataSource;
      return new OwnDataSource({
        ...options,
        entities: [],
        subscribers: [],
        migrations: [],
        migrationsRun: false,
        synchronize: false,
        dropSchema: false,
        cache: false,
        poolSize: OWN_POOL_SIZE,
        extra: { ...options.extra, max: OWN_POOL_SIZE },
      } as DataSourceOptions).initialize();
    },
    lend: connectTo,
    end: async (source) => {
      if (source.isInitialized) await source.destroy();
    },
  };
}

/** A connection of `dataSource`'s pool, through a QueryRunner. */
export async function connectTo(dataSource: DataSource): Promise<PooledConnection> {
  const queryRunner = dataSource.createQueryRunner('master');
  try {
    return { client: (await queryRunner.connect()) as PgClient, release: () => queryRunner.release() };
  } catch (error) {
    await queryRunner.release();
    throw error;
  }
}
