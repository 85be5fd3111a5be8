// The bench's PostgreSQL, chosen as the tests choose it: DATABASE_URL when set (the bench then
// works in a scratch database it creates on that server and drops at the end), else a throw-away
// embedded PostgreSQL. Migrations run once here, before any server starts.
import pg from 'pg';
import { DataSource } from 'typeorm';
import {
  CreateIdempotencyKeys1795996800000,
  CreatePartitionedIdempotencyKeys1795996800000,
  CreateIdempotencyOutbox1796515200000,
} from '../dist/esm//index.js';
import { DEMO_TABLES } from '../dist/esm/demo/demo-tables.js';

/**
 * Starts (or connects to) PostgreSQL and migrates it: `{ url, kind, version, sql, stop }`;
 * `keyTable: 'partitioned'`: idempotency_keys partitioned by expiry.
 */
export async function startDatabase({ keyTable = 'plain' } = {}) {
  const database = process.env.DATABASE_URL ? await scratchDatabase(process.env.DATABASE_URL) : await embedded();
  try {
    await migrate(
      database.url,
      keyTable === 'partitioned' ? CreatePartitionedIdempotencyKeys1795996800000 : CreateIdempotencyKeys1795996800000,
    );
    const pool = new pg.Pool({ connectionString: database.url, max: 2 });
    // An idle connection the server ends (shutdown, a terminated backend) must not crash the bench.
    pool.on('error', (error) => process.stderr.write(`bench: idle PostgreSQL connection: ${error.message}\n`));
    const sql = async (text, params = []) => (await pool.query(text, params)).rows;
    const [{ server_version: version }] = await sql('SHOW server_version');
    return {
      ...database,
      version,
      sql,
      stop: async () => {
        await pool.end().catch(() => undefined);
        await database.stop();
      },
    };
  } catch (error) {
    await database.stop();
    throw error;
  }
}

async function embedded() {
  const { startEmbeddedPostgres } = await import('../dist/esm/demo/database/embedded-postgres.js');
  const database = await startEmbeddedPostgres();
  return { ...database, kind: 'embedded PostgreSQL (fsync=off, max_connections=200)' };
}

/**
 * A fresh database on the DATABASE_URL server, so the bench's million rows never land in the
 * database the URL names. Needs the CREATEDB privilege; it is dropped again at the end.
 */
async function scratchDatabase(url) {
  const name = `nestjs_pg_idempotency_bench_${process.pid}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } catch (error) {
    await admin.end();
    throw new Error(
      `bench: cannot create the scratch database ${name} on the DATABASE_URL server (${error.message}); the bench needs CREATEDB`,
    );
  }
  await admin.end();
  const scratch = new URL(url);
  scratch.pathname = `/${name}`;
  let stopped;
  return {
    url: scratch.toString(),
    kind: `DATABASE_URL server, scratch database ${name}`,
    stop: () =>
      (stopped ??= (async () => {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).finally(() => client.end());
      })()),
  };
}

async function migrate(url, keyTable) {
  const dataSource = new DataSource({
    type: 'postgres',
    url,
    migrations: [keyTable, CreateIdempotencyOutbox1796515200000, ...DEMO_TABLES],
  });
  await dataSource.initialize();
  try {
    await dataSource.runMigrations();
  } finally {
    await dataSource.destroy();
  }
}
