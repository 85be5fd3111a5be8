import { ClsPluginTransactional } from '@nestjs-cls/transactional';
import { getDataSourceToken } from '@nestjs/typeorm';
import { ClsModule } from 'nestjs-cls';
import {
  IdempotentTransactionalAdapterPrisma,
  IdempotentTransactionalAdapterTypeOrm,
} from '../../src/tools/cls/index.js';
import { IdempotentPrisma } from '../../src/tools/prisma/index.js';
import { appsOn, HTTP_PLATFORMS, type HttpPlatform, type RunningApp } from '../support/apps.js';
import { keyRows, paymentCount, sql } from '../support/database.js';
import { type Answer, newCaller, newKey, send, validPayment } from '../support/http.js';
import { type DemoProcess, startAppProcess, waitFor } from '../support/processes.js';
import { startPrismaLab } from '../support/prisma-lab.js';
import { sentQueries } from '../support/sent-queries.js';
import { ClsPrismaScenarioController, PrismaScenarioLedger, PrismaScenarioPayments } from './cls-prisma.controller.js';
import { PrismaPayments, PrismaScenarioController } from './prisma-host.controller.js';
import {
  ClsScenarioController,
  ScenarioLedger,
  ScenarioPayments,
  TypeOrmScenarioController,
} from './hosts.controller.js';

/**
 * The hosts every scenario runs through: TypeORM (both ways of reaching it), @nestjs-cls/transactional
 * on TypeORM, and Drizzle on a node-postgres pool with no TypeORM (an app process of its own,
 * drizzle-host.app.mjs, which refuses to load TypeORM), and Prisma 7 on the same kind of pool
 * (IdempotentPrisma, its payment and ledger entry two models written through the key's client).
 */
const HOSTS = ['typeorm', 'typeorm public API', 'cls', 'drizzle', 'prisma', 'cls prisma'] as const;
type Host = (typeof HOSTS)[number];

const DRIZZLE_APP = 'test/e2e/drizzle-host.app.mjs';

const amounts = async (caller: string): Promise<number[]> =>
  (await sql<{ amount: number }>('SELECT amount FROM payments WHERE caller = $1 ORDER BY amount', [caller])).map(
    (row) => row.amount,
  );

async function startHostApp(platform: HttpPlatform, host: Host): Promise<RunningApp | DemoProcess> {
  if (host === 'drizzle') return startAppProcess(DRIZZLE_APP, { HTTP_PLATFORM: platform });
  if (host === 'prisma')
    return startPrismaLab({}, { platform, controllers: [PrismaScenarioController], providers: [PrismaPayments] });
  if (host === 'cls prisma') {
    return startPrismaLab(
      {},
      {
        platform,
        imports: [
          ClsModule.forRoot({
            global: true,
            middleware: { mount: true },
            plugins: [
              new ClsPluginTransactional({
                adapter: new IdempotentTransactionalAdapterPrisma({ prismaInjectionToken: IdempotentPrisma }),
              }),
            ],
          }),
        ],
        controllers: [ClsPrismaScenarioController],
        providers: [PrismaScenarioPayments, PrismaScenarioLedger],
      },
    );
  }
  if (host === 'cls') {
    return appsOn(platform).startLab(
      {},
      {
        imports: [
          ClsModule.forRoot({
            global: true,
            middleware: { mount: true },
            plugins: [
              new ClsPluginTransactional({
                adapter: new IdempotentTransactionalAdapterTypeOrm({ dataSourceToken: getDataSourceToken() }),
              }),
            ],
          }),
        ],
        controllers: [ClsScenarioController],
        providers: [ScenarioPayments, ScenarioLedger],
      },
    );
  }
  return appsOn(platform, host).startLab({}, { controllers: [TypeOrmScenarioController] });
}

const isExecution = (answer: Answer) => answer.status === 201 && !answer.headers['idempotent-replayed'];

describe.each(HTTP_PLATFORMS.flatMap((platform) => HOSTS.map((host) => [platform, host] as const)))(
  'the scenarios on %s, %s',
  (platform, host) => {
    let app: RunningApp | DemoProcess;
    beforeAll(async () => (app = await startHostApp(platform, host)));
    afterAll(() => ('close' in app ? app.close() : app.stop()));
    const pay = (key: string, caller: string, body: object = { amount: 100 }, headers: Record<string, string> = {}) =>
      send(`${app.url}/scenario/pay`, { key, caller, body, headers });

    it('50 concurrent requests with one key execute once; the others get 409 or the byte-identical replay', async () => {
      const [caller, key] = [newCaller(), newKey()];
      const answers = await Promise.all(Array.from({ length: 50 }, () => pay(key, caller)));
      const executed = answers.filter(isExecution);
      expect(executed).toHaveLength(1);
      expect(
        answers
          .filter((answer) => answer.status !== 409 && !isExecution(answer))
          .every((answer) => answer.body.equals(executed[0].body)),
      ).toBe(true);
      expect(await paymentCount(caller)).toBe(1);
    });

    it('a handler that writes and then throws (500) leaves no row and no key; the retry runs once', async () => {
      const [caller, key] = [newCaller(), newKey()];
      expect((await pay(key, caller, { amount: 100 }, { 'x-fail': 'after-write' })).status).toBe(500);
      expect(await paymentCount(caller)).toBe(0);
      expect(await keyRows(caller)).toEqual([]);
      expect(isExecution(await pay(key, caller))).toBe(true);
      expect(await paymentCount(caller)).toBe(1);
    });

    it('a thrown 4xx is recorded and replayed, its writes rolled back', async () => {
      const [caller, key] = [newCaller(), newKey()];
      const declined = await pay(key, caller, { amount: 1_000_000 });
      expect(declined.status).toBe(402);
      const replay = await pay(key, caller, { amount: 1_000_000 });
      expect(replay.status).toBe(402);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body.equals(declined.body)).toBe(true);
      expect(await paymentCount(caller)).toBe(0);
      expect(await keyRows(caller)).toEqual([{ key, endpoint: 'POST /scenario/pay', state: 'completed', status: 402 }]);
    });

    it('replays are byte-identical; another payload with the key is 422, nothing run', async () => {
      const [caller, key] = [newCaller(), newKey()];
      const first = await pay(key, caller);
      const replay = await pay(key, caller);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body.equals(first.body)).toBe(true);
      expect((await pay(key, caller, { amount: 101 })).status).toBe(422);
      expect(await paymentCount(caller)).toBe(1);
    });
  },
);

const CLS_HOSTS = ['cls', 'cls prisma'] as const;

describe.each(HTTP_PLATFORMS.flatMap((platform) => CLS_HOSTS.map((host) => [platform, host] as const)))(
  '@nestjs-cls/transactional inside an @Idempotent() request, on %s, %s',
  (platform, host) => {
    let app: RunningApp;
    beforeAll(async () => (app = (await startHostApp(platform, host)) as RunningApp));
    afterAll(() => app.close());
    const post = (route: string, key: string | undefined, caller: string, amount = 100) =>
      send(`${app.url}/scenario/${route}`, { key, caller, body: { amount } });

    it('the outermost @Transactional() is a savepoint: its writes are undone when it throws, even when the handler catches the error and answers', async () => {
      const [caller, key] = [newCaller(), newKey()];
      const answer = await post('caught', key, caller);
      expect(answer.status).toBe(201);
      expect(answer.json).toEqual({ caught: 'declined' });
      expect(await paymentCount(caller)).toBe(0);
      expect(await keyRows(caller)).toHaveLength(1);
    });

    it('the outermost @Transactional() after the handler wrote sets a savepoint of its own: its failure undoes its write, not the one before', async () => {
      const [caller, key] = [newCaller(), newKey()];
      const answer = await post('caught-after-write', key, caller);
      expect(answer.status).toBe(201);
      expect(answer.json).toEqual({ caught: 'declined' });
      expect(await amounts(caller)).toEqual([100]);
      expect(await keyRows(caller)).toHaveLength(1);
    });

    // The handler's savepoint is lent on TypeORM's host only (Prisma's transactions set their own).
    if (host === 'cls')
      it('an executed payment, two @Transactional() services deep, costs the round trips it costs on TypeORM: no SAVEPOINT of its own', async () => {
        await post('pay', newKey(), newCaller());
        const sent = await sentQueries(() => post('pay', newKey(), newCaller()));
        // START + lock + lookup + SAVEPOINT, INSERT, SELECT, the key's row + COMMIT.
        expect(sent).toHaveLength(4);
        expect(sent.filter((text) => /SAVEPOINT/.test(text) && !/nestjs_pg_idempotency_handler/.test(text))).toEqual(
          [],
        );
      });

    it('Propagation.Nested inside a @Transactional() method is a savepoint: when it fails, its own write only is undone', async () => {
      const [caller, key] = [newCaller(), newKey()];
      const answer = await post('inner-failure/nested', key, caller);
      expect(answer.status).toBe(201);
      expect(await paymentCount(caller)).toBe(1);
    });

    it('Propagation.Required inside a @Transactional() method joins it, as upstream: its failure, caught, undoes nothing', async () => {
      const [caller, key] = [newCaller(), newKey()];
      const answer = await post('inner-failure/required', key, caller);
      expect(answer.status).toBe(201);
      expect(await paymentCount(caller)).toBe(2);
      expect(await keyRows(caller)).toHaveLength(1);
    });

    it.each([
      ['requires-new', 'NewTransactionInKeyError', /would commit outside the key's transaction/],
      ['not-supported', 'TransactionSuspendedInKeyError', /would commit outside the key's transaction/],
      ['serializable', 'TransactionalIsolationError', /READ COMMITTED/],
    ])('%s fails with %s, which says why, and nothing is kept', async (route, error, why) => {
      const [caller, key] = [newCaller(), newKey()];
      const answer = await post(route, key, caller);
      expect(answer.status).toBe(500);
      expect(answer.json.detail).toMatch(new RegExp(`^${error}: `));
      expect(answer.json.detail).toMatch(why);
      expect(await paymentCount(caller)).toBe(0);
      expect(await keyRows(caller)).toEqual([]);
    });

    it('outside an @Idempotent() request, @Transactional() commits a transaction of its own, as upstream', async () => {
      const caller = newCaller();
      expect((await post('plain', undefined, caller)).status).toBe(201);
      expect(await paymentCount(caller)).toBe(1);
    });
  },
);

describe.each(HTTP_PLATFORMS)('Drizzle on a node-postgres pool, as app processes, on %s', (platform) => {
  it('three processes on one database execute each of 20 keys once, under 200 concurrent requests', async () => {
    const apps = await Promise.all(
      [0, 1, 2].map(() => startAppProcess(DRIZZLE_APP, { HTTP_PLATFORM: platform, DEMO_LATENCY_MS: '200' })),
    );
    try {
      const caller = newCaller();
      const keys = Array.from({ length: 20 }, () => newKey());
      const answers = await Promise.all(
        keys.flatMap((key, k) =>
          Array.from({ length: 10 }, (_, i) =>
            send(`${apps[(k + i) % 3].url}/payments`, { key, caller, body: validPayment }),
          ),
        ),
      );
      expect(answers.filter(isExecution)).toHaveLength(20);
      expect(answers.filter((answer) => answer.status !== 201 && answer.status !== 409)).toEqual([]);
      expect(await paymentCount(caller)).toBe(20);
    } finally {
      await Promise.all(apps.map((app) => app.stop()));
    }
  });

  it('a process killed mid-request leaves no stuck key and no half-written payment: the retry runs once', async () => {
    const victim = await startAppProcess(DRIZZLE_APP, { HTTP_PLATFORM: platform, DEMO_LATENCY_MS: '10000' });
    const other = await startAppProcess(DRIZZLE_APP, { HTTP_PLATFORM: platform });
    try {
      const [caller, key] = [newCaller(), newKey()];
      const inFlight = send(`${victim.url}/payments`, { key, caller, body: validPayment }).catch(
        (error: Error) => error,
      );
      await waitFor(
        'the handler to hold the key',
        async () =>
          (
            await sql(
              `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction' AND backend_xid IS NOT NULL`,
            )
          ).length === 1,
      );
      expect((await send(`${other.url}/payments`, { key, caller, body: validPayment })).status).toBe(409);
      await victim.kill();
      expect(await inFlight).toHaveProperty('code', 'ECONNRESET');
      const retry = await send(`${other.url}/payments`, { key, caller, body: validPayment });
      expect(isExecution(retry)).toBe(true);
      expect(await paymentCount(caller)).toBe(1);
      expect(await keyRows(caller)).toEqual([{ key, endpoint: 'POST /payments', state: 'completed', status: 201 }]);
    } finally {
      await victim.kill();
      await other.stop();
    }
  });
});
