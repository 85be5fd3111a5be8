import { Logger } from '@nestjs/common';
import { execFileSync } from 'node:child_process';
import { Client } from 'pg';
import { appsOn, databaseUrl, HTTP_PLATFORMS, type RunningApp } from '../support/apps.js';
import { keyRows, paymentCount } from '../support/database.js';
import { newCaller, newKey, send, validPayment } from '../support/http.js';

/** A port of this suite's own, so that every run starts with new server sessions. */
const PORT = '6545';

/** `scripts/pgbouncer.mjs`, which `npm run test:pooler` uses too. */
const pgbouncer = (...args: string[]): string =>
  execFileSync(process.execPath, ['scripts/pgbouncer.mjs', ...args], { encoding: 'utf8' }).trim();

/**
 * Opens PgBouncer's 5 server connections (5 transactions at once): PgBouncer hands idle ones out
 * in turn, so a connection's next transaction runs on another server session.
 */
async function openServerConnections(url: string): Promise<void> {
  const clients = Array.from({ length: 5 }, () => new Client({ connectionString: url }));
  await Promise.all(clients.map((client) => client.connect()));
  try {
    await Promise.all(clients.map((client) => client.query('BEGIN; SELECT 1')));
    await Promise.all(clients.map((client) => client.query('COMMIT')));
  } finally {
    await Promise.all(clients.map((client) => client.end()));
  }
}

/**
 * The module's default options behind a real PgBouncer in transaction mode with a pool of 5
 * server connections, each new (none has prepared anything) and handed out in turn: the case
 * where prepared statements vanish between a connection's transactions. On TypeORM (the lab) and
 * on Prisma (the demo with `DEMO_TX=prisma`: the payment and its ledger entry through
 * `IdempotentPrisma`, whose queries PrismaPg sends unnamed).
 */
const PLATFORMS_AND_POOLER_HOSTS = HTTP_PLATFORMS.flatMap((platform) =>
  (['typeorm', 'prisma'] as const).map((host) => [platform, host] as const),
);

describe.each(PLATFORMS_AND_POOLER_HOSTS)(
  'behind PgBouncer in transaction mode, with the default options, on %s, %s',
  (platform, host) => {
    let lab: RunningApp;
    let warn: jest.SpyInstance;
    beforeAll(async () => {
      warn = jest.spyOn(Logger.prototype, 'warn');
      process.env.APP_DATABASE_URL = pgbouncer('start', databaseUrl(), PORT);
      await openServerConnections(process.env.APP_DATABASE_URL);
      lab = host === 'prisma' ? await appsOn(platform, 'prisma').startDemo() : await appsOn(platform).startLab();
    });
    afterAll(async () => {
      await lab?.close();
      delete process.env.APP_DATABASE_URL;
      pgbouncer('stop', PORT);
      warn.mockRestore();
    });

    const vanishedLines = (): string[] =>
      warn.mock.calls
        .map(([message]) => String(message))
        .filter((message) => message.includes('prepared statements vanished'));

    it('a first request, alone, whose statements were prepared on another server session: a 201, one payment, and one warning naming the cause and the option', async () => {
      const caller = newCaller();
      const answer = await send(`${lab.url}/payments`, { key: newKey(), caller, body: validPayment });
      expect(answer.status).toBe(201);
      expect(await paymentCount(caller)).toBe(1);
      expect(await keyRows(caller)).toHaveLength(1);
      const lines = vanishedLines();
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/pooler in transaction mode \(PgBouncer\).*preparedStatements: false/);
    });

    it('200 concurrent requests over 20 keys: no error, each key executed once, every duplicate a 409 or the byte-identical replay', async () => {
      const caller = newCaller();
      const keys = Array.from({ length: 20 }, () => newKey());
      const answers = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          send(`${lab.url}/payments`, { key: keys[i % 20], caller, body: validPayment }),
        ),
      );
      const statuses = answers.map((answer) => answer.status);
      expect(statuses.filter((status) => status !== 201 && status !== 409)).toEqual([]);
      const executed = answers.filter((answer) => answer.status === 201 && !answer.headers['idempotent-replayed']);
      expect(executed).toHaveLength(20);
      expect(await paymentCount(caller)).toBe(20);
      expect(await keyRows(caller)).toHaveLength(20);
      for (const [index, key] of keys.entries()) {
        const first = answers.find(
          (answer, i) => i % 20 === index && answer.status === 201 && !answer.headers['idempotent-replayed'],
        )!;
        const replay = await send(`${lab.url}/payments`, { key, caller, body: validPayment });
        expect(replay.headers['idempotent-replayed']).toBe('true');
        expect(replay.body.equals(first.body)).toBe(true);
      }
      const other = await send(`${lab.url}/payments`, { key: keys[0], caller, body: { ...validPayment, amount: 2 } });
      expect(other.status).toBe(422);
    });

    it('says it once', () => {
      expect(vanishedLines()).toHaveLength(1);
    });
  },
);
