import type { DataSource, DataSourceOptions } from 'typeorm';

/** Connections of the module's own pool; each statement on it takes about a millisecond. */
const OWN_POOL_SIZE = 2;

/**
 * The module's own small pool beside the app's DataSource: a second DataSource of the same
 * TypeORM, with the app's connection options, no entities and two connections, opened at its
 * first use. Lease mode keeps its rows with it (renewals, recordings, releases), so that they
 * never queue behind the app's requests for a connection (a renewal waiting behind a busy pool
 * would let the lease end under its live holder, and a retry would run the handler again).
 */
export class OwnPool {
  private source?: Promise<DataSource>;
  /** The app shut down: nothing is sent any more (a late statement would open a pool nothing ends). */
  private closed = false;

  constructor(private readonly app: DataSource) {}

  dataSource(): Promise<DataSource> {
    if (this.closed) return Promise.reject(new Error('nestjs-pg-idempotency: the app has shut down; lease-mode statements are no longer sent'));
    this.source ??= this.open();
    return this.source;
  }

  async close(): Promise<void> {
    this.closed = true;
    const source = await this.source?.catch(() => undefined);
    this.source = undefined;
    if (source?.isInitialized) await source.destroy();
  }

  private async open(): Promise<DataSource> {
    const options = this.app.options as DataSourceOptions & { extra?: Record<string, unknown> };
    const OwnDataSource = this.app.constructor as new (options: DataSourceOptions) => DataSource;
    const source = new OwnDataSource({
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
    } as DataSourceOptions);
    try {
      return await source.initialize();
    } catch (error) {
      this.source = undefined;
      throw error;
    }
  }
}
