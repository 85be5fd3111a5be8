import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { IdempotencyService, type OutboxPublisher } from '../../src/index.js';
import { appsOn, bootstrapFailure } from '../support/apps.js';
import { cli } from '../support/cli.js';
import { emptyDatabase } from '../support/database.js';
import { newCaller, newKey, send, validPayment } from '../support/http.js';

/** The demo's payments table, as an app's own SQL file (`migrate --sql`). */
const PAYMENTS_SQL = `CREATE TABLE IF NOT EXISTS payments (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(), caller text NOT NULL,
  amount integer NOT NULL CHECK (amount > 0), currency char(3) NOT NULL, created_at timestamptz NOT NULL DEFAULT now()
);`;

/** The tables `url`'s database holds, of those a migration creates here. */
async function tablesOf(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>(
      `SELECT relname AS name FROM pg_class WHERE relkind IN ('r', 'p') AND relname IN ('idempotency_keys', 'idempotency_outbox', 'payments') ORDER BY 1`,
    );
    return rows.map((row) => row.name);
  } finally {
    await client.end();
  }
}

describe('a database without the module tables', () => {
  const { startLab } = appsOn('express');
  let database: { url: string; drop(): Promise<void> };
  let folder: string;
  let paymentsSql: string;
  beforeEach(async () => {
    database = await emptyDatabase('missing_tables');
    folder = mkdtempSync(join(tmpdir(), 'missing-tables-'));
    paymentsSql = join(folder, 'payments.sql');
    writeFileSync(paymentsSql, PAYMENTS_SQL);
  });
  afterEach(async () => {
    await database.drop();
    rmSync(folder, { recursive: true, force: true });
  });

  it('the app refuses to start, naming the command, the TypeORM class and the SQL file; after `migrate` it starts and answers', async () => {
    const refused = await bootstrapFailure(startLab({}, { databaseUrl: database.url }));
    expect(refused).toBeInstanceOf(Error);
    const message = (refused as Error).message;
    expect((refused as Error).name).toBe('TablesNotMigratedError');
    expect(message).toContain('there is no idempotency_keys table');
    expect(message).toContain('`npx nestjs-pg-idempotency migrate`');
    expect(message).toContain('CreateIdempotencyKeys1795996800000');
    expect(message).toContain(
      'node_modules/nestjs-pg-idempotency/migrations/1795996800000-create-idempotency-keys.sql',
    );

    const migrated = await cli(['migrate', '--sql', paymentsSql], { DATABASE_URL: database.url });
    expect(migrated).toMatchObject({ code: 0 });
    expect(migrated.stdout).toBe(`applied: idempotency_keys\napplied: ${paymentsSql}\n`);
    expect(await tablesOf(database.url)).toEqual(['idempotency_keys', 'payments']);
    // Safe to re-run: what exists is left as it is.
    expect(await cli(['migrate'], { DATABASE_URL: database.url })).toMatchObject({
      code: 0,
      stdout: 'present: idempotency_keys\n',
    });
    // The partitioned table is not asked of a database that holds the plain one.
    const other = await cli(['migrate', '--partitioned'], { DATABASE_URL: database.url });
    expect(other).toMatchObject({ code: 4 });
    expect(other.stderr).toContain('idempotency_keys exists and is not partitioned');

    const lab = await startLab({}, { databaseUrl: database.url });
    try {
      const caller = newCaller();
      const key = newKey();
      const first = await send(`${lab.url}/payments`, { key, caller, body: validPayment });
      const again = await send(`${lab.url}/payments`, { key, caller, body: validPayment });
      expect(first.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.text).toBe(first.text);
    } finally {
      await lab.close();
    }
  });

  it('with the outbox configured, a missing idempotency_outbox refuses the start, naming `migrate --outbox`', async () => {
    expect(await cli(['migrate'], { DATABASE_URL: database.url })).toMatchObject({ code: 0 });
    const publisher: OutboxPublisher = { publish: async () => undefined };
    const refused = await bootstrapFailure(
      startLab({ outbox: { publishers: { rabbit: publisher }, relay: false } }, { databaseUrl: database.url }),
    );
    expect((refused as Error).message).toContain('there is no idempotency_outbox table');
    expect((refused as Error).message).toContain('`npx nestjs-pg-idempotency migrate --outbox`');
    expect((refused as Error).message).not.toContain('there is no idempotency_keys table');
    expect(await cli(['migrate', '--outbox'], { DATABASE_URL: database.url })).toMatchObject({ code: 0 });
    expect(await tablesOf(database.url)).toEqual(['idempotency_keys', 'idempotency_outbox']);
  });

  it('a migration whose SQL file fails applies nothing, and says so', async () => {
    const broken = join(folder, 'broken.sql');
    writeFileSync(broken, 'CREATE TABLE payments (id int); SELECT no_such_function();');
    const failed = await cli(['migrate', '--sql', broken], { DATABASE_URL: database.url });
    expect(failed).toMatchObject({ code: 4 });
    expect(failed.stderr).toContain('the migration failed, nothing was applied');
    expect(await tablesOf(database.url)).toEqual([]);
  });

  it('checkTables: false starts; each key is a 500 store-not-migrated problem (no Retry-After), run() says not-migrated; nothing ran', async () => {
    expect(await cli(['migrate', '--sql', paymentsSql], { DATABASE_URL: database.url })).toMatchObject({ code: 0 });
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    await client.query('DROP TABLE idempotency_keys');
    const lab = await startLab({ checkTables: false }, { databaseUrl: database.url });
    try {
      const caller = newCaller();
      const answer = await send(`${lab.url}/payments`, { key: newKey(), caller, body: validPayment });
      expect(answer.status).toBe(500);
      expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(answer.headers['retry-after']).toBeUndefined();
      expect(answer.json).toMatchObject({ type: 'urn:nestjs-pg-idempotency:store-not-migrated', status: 500 });
      expect(answer.json.detail).toContain('a retry fails the same way until the migration is run');
      let ran = 0;
      const outcome = await lab.app.get(IdempotencyService).run({ scope: 'report', key: 'k1' }, () => ++ran);
      expect(outcome).toMatchObject({ kind: 'unavailable', reason: 'not-migrated' });
      expect(ran).toBe(0);
      const { rows } = await client.query('SELECT count(*)::int AS n FROM payments');
      expect(rows[0].n).toBe(0);
      // Created while the app runs: the next key is taken.
      expect(await cli(['migrate'], { DATABASE_URL: database.url })).toMatchObject({ code: 0 });
      expect((await send(`${lab.url}/payments`, { key: newKey(), caller, body: validPayment })).status).toBe(201);
    } finally {
      await lab.close();
      await client.end();
    }
  });
});

describe('migrate on a database that holds the partitioned key table', () => {
  it('leaves it as it is: no index of the plain table is built on it, and --outbox adds the outbox alone', async () => {
    const database = await emptyDatabase('migrate_partitioned');
    try {
      expect(await cli(['migrate', '--partitioned'], { DATABASE_URL: database.url })).toMatchObject({
        code: 0,
        stdout: 'applied: idempotency_keys (partitioned by expiry)\n',
      });
      expect(await cli(['migrate', '--outbox'], { DATABASE_URL: database.url })).toMatchObject({
        code: 0,
        stdout: 'present: idempotency_keys (partitioned by expiry)\napplied: idempotency_outbox\n',
      });
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      const { rows } = await client.query(
        `SELECT indexname FROM pg_indexes WHERE tablename = 'idempotency_keys' ORDER BY indexname`,
      );
      await client.end();
      expect(rows.map((row) => row.indexname)).toEqual([
        'idempotency_keys_leases_idx',
        'idempotency_keys_pkey',
        'idempotency_keys_response_expires_at_idx',
      ]);
    } finally {
      await database.drop();
    }
  });
});
