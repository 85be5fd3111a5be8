import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from '../../src/demo/prisma/generated/client.js';
import { appDatabaseUrl, HTTP_PLATFORMS, type RunningApp } from '../support/apps.js';
import { keyRows, paymentCount, sql } from '../support/database.js';
import { newCaller, newKey, send } from '../support/http.js';
import { startPrismaLab } from '../support/prisma-lab.js';
import { entered, release } from '../support/latch.js';
import { leftRunning, PrismaPayments, PrismaScenarioController } from './prisma-host.controller.js';

const ledgerCount = async (caller: string): Promise<number> =>
  Number(
    (
      await sql<{ count: string }>(
        'SELECT count(*) FROM ledger_entries e JOIN payments p ON p.id = e.payment_id WHERE p.caller = $1',
        [caller],
      )
    )[0].count,
  );
const amounts = async (caller: string): Promise<number[]> =>
  (await sql<{ amount: number }>('SELECT amount FROM payments WHERE caller = $1 ORDER BY amount', [caller])).map(
    (row) => row.amount,
  );

/** Prisma 7 as a transactional host: what a Prisma team's handler does inside the key's transaction. */
describe.each(HTTP_PLATFORMS)('Prisma in the key transaction, on %s', (platform) => {
  let app: RunningApp;
  beforeAll(
    async () =>
      (app = await startPrismaLab(
        {},
        { platform, controllers: [PrismaScenarioController], providers: [PrismaPayments] },
      )),
  );
  afterAll(() => app.close());
  const post = (
    route: string,
    key: string,
    caller: string,
    body: object = { amount: 100 },
    headers: Record<string, string> = {},
  ) => send(`${app.url}/scenario/${route}`, { key, caller, body, headers });

  it('writes two models in the key transaction: a duplicate while it runs gets 409, the retry after it the replay; one payment, one entry', async () => {
    const [caller, key, gate] = [newCaller(), newKey(), `held-${newKey()}`];
    const first = post('held', key, caller, { amount: 100 }, { 'x-latch': gate });
    await entered(gate);
    // Written, not committed: the key's transaction holds both rows until the handler returns.
    expect(await paymentCount(caller)).toBe(0);
    const duplicate = await post('held', key, caller, { amount: 100 }, { 'x-latch': gate });
    expect(duplicate.status).toBe(409);
    release(gate);
    const answer = await first;
    expect(answer.status).toBe(201);
    const replay = await post('held', key, caller, { amount: 100 }, { 'x-latch': gate });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.equals(answer.body)).toBe(true);
    expect(await paymentCount(caller)).toBe(1);
    expect(await ledgerCount(caller)).toBe(1);
  });

  it("the key's row refused at commit (a statement failed in the key's transaction and the handler went on) is a 500 that keeps nothing; the retry runs once", async () => {
    const [caller, key] = [newCaller(), newKey()];
    const refused = await post('pay', key, caller, { amount: 100 }, { 'x-fail': 'aborted' });
    expect(refused.status).toBe(500);
    expect(refused.json.type).toBe('urn:nestjs-pg-idempotency:outcome-not-recorded');
    expect(await paymentCount(caller)).toBe(0);
    expect(await keyRows(caller)).toEqual([]);
    const retried = await post('pay', key, caller);
    expect(retried.status).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(await paymentCount(caller)).toBe(1);
    expect(await ledgerCount(caller)).toBe(1);
  });

  it('a database failure a Prisma error carries (a statement timeout) is a 503 with Retry-After, its writes undone, its key free', async () => {
    const [caller, key] = [newCaller(), newKey()];
    const failed = await post('pay', key, caller, { amount: 100 }, { 'x-fail': 'timeout' });
    expect(failed.status).toBe(503);
    expect(failed.json.type).toBe('urn:nestjs-pg-idempotency:store-unavailable');
    expect(failed.headers['retry-after']).toMatch(/^\d+$/);
    expect(await paymentCount(caller)).toBe(0);
    expect(await keyRows(caller)).toEqual([]);
    expect((await post('pay', key, caller)).status).toBe(201);
    expect(await paymentCount(caller)).toBe(1);
  });

  it('a nested $transaction() that fails is rolled back to its savepoint and keeps the outer writes', async () => {
    const [caller, key] = [newCaller(), newKey()];
    const answer = await post('nested', key, caller);
    expect(answer.status).toBe(201);
    expect(answer.json.inner).toBe('the ledger refused the entry');
    expect(await paymentCount(caller)).toBe(1);
    expect(await ledgerCount(caller)).toBe(0);
    expect(await keyRows(caller)).toHaveLength(1);
  });

  it('a batch $transaction([...]) commits with the key, once', async () => {
    const [caller, key] = [newCaller(), newKey()];
    expect((await post('batch', key, caller)).status).toBe(201);
    expect((await post('batch', key, caller)).headers['idempotent-replayed']).toBe('true');
    expect(await amounts(caller)).toEqual([100, 101]);
  });

  it('a $transaction() at another isolation level is refused with an error that says why, and nothing is kept', async () => {
    const [caller, key] = [newCaller(), newKey()];
    const answer = await post('serializable', key, caller);
    expect(answer.status).toBe(500);
    expect(answer.json.detail).toMatch(/at SERIALIZABLE inside an @Idempotent\(\) request: .*READ COMMITTED/);
    expect(await paymentCount(caller)).toBe(0);
    expect(await keyRows(caller)).toEqual([]);
  });

  it("code left running after the key's transaction: a query through the client taken inside is refused; prisma.client read anew is the app's, and commits on its own", async () => {
    const [caller, key, gate] = [newCaller(), newKey(), `left-${newKey()}`];
    expect((await post('left-running', key, caller, { amount: 100 }, { 'x-latch': gate })).status).toBe(201);
    release(gate);
    const outcome = await leftRunning.get(caller);
    expect(outcome).toMatch(/^refused: .*a query from outside the key's transaction .* \| committed$/);
    expect(await amounts(caller)).toEqual([101]);
    expect(await keyRows(caller)).toHaveLength(1);
  });
});

describe('the Prisma host at bootstrap', () => {
  it('refuses to start when the client factory puts a stand-in adapter in place of the one it is given, naming the versions', async () => {
    const otherPool = new pg.Pool({ connectionString: appDatabaseUrl(), max: 2 });
    // Of another shape: it takes its own pool, not the key's connection.
    class StandInAdapter extends PrismaPg {
      constructor() {
        super(otherPool);
      }
    }
    try {
      const failure = await startPrismaLab(
        {},
        { client: () => new PrismaClient({ adapter: new StandInAdapter() }) },
      ).then(
        (app) => app.close().then(() => undefined),
        (error: unknown) => error,
      );
      expect((failure as Error)?.name).toBe('IdempotencyConfigurationError');
      expect((failure as Error).message).toMatch(
        /@prisma\/client 7\.\d+\.\d+, @prisma\/adapter-pg 7\.\d+\.\d+: a query of the key's Prisma client ran on another connection/,
      );
      expect((failure as Error).message).toMatch(/lease mode/);
    } finally {
      await otherPool.end();
    }
  });

  it("refuses to start on TypeORM's host: IdempotentPrisma runs on the module's pool", async () => {
    const { startLab } = await import('../support/apps.js');
    const { idempotentPrisma } = await import('../../src/tools/prisma/index.js');
    const failure = await startLab(
      {},
      { providers: [idempotentPrisma((adapter) => new PrismaClient({ adapter }))] },
    ).then(
      (app) => app.close().then(() => undefined),
      (error: unknown) => error,
    );
    expect((failure as Error).message).toMatch(/IdempotentPrisma runs on the node-postgres pool the module is given/);
  });
});
