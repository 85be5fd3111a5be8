import { type INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { IdempotentDrizzle } from '../../src/tools/drizzle/index.js';
import { IdempotencyModule } from '../../src/index.js';
import { ProblemDetailsFilter } from '../../src/demo/http/problem-details.filter.js';
import { appDatabaseUrl } from '../support/apps.js';
import { keyRows, paymentCount, until } from '../support/database.js';
import { newCaller, newKey, send } from '../support/http.js';
import { release } from '../support/latch.js';
import { drizzleKeyClientController, lateWrites } from './drizzle-key-client.controller.js';

/** The node-postgres host's key client under Drizzle: what a handler's misuse of the key's transaction meets. */
describe('Drizzle on the key transaction of a node-postgres pool', () => {
  let pool: pg.Pool;
  let app: INestApplication;
  let url: string;
  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: appDatabaseUrl(), max: 4 });
    const Routes = drizzleKeyClientController(new IdempotentDrizzle(drizzle({ client: pool })));
    @Module({ imports: [IdempotencyModule.forRoot({ pool, sweepInterval: 0 })], controllers: [Routes] })
    class DrizzleModule {}
    app = await NestFactory.create(DrizzleModule, { logger: false });
    app.useGlobalFilters(new ProblemDetailsFilter(app.getHttpAdapter()));
    await app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${app.getHttpServer().address().port}`;
  });
  afterAll(async () => {
    await app.close();
    await pool.end();
  });

  it('a transaction the handler starts is a savepoint: its failure undoes its own write only', async () => {
    const caller = newCaller();
    expect((await send(`${url}/drizzle/inner-failure`, { key: newKey(), caller, body: {} })).status).toBe(201);
    expect(await paymentCount(caller)).toBe(1);
  });

  it.each([
    ['commit', /COMMIT on the transaction of an @Idempotent\(\) request/],
    ['serializable', /another isolation level/],
  ])('%s: refused with an error that says why; nothing is kept', async (route, why) => {
    const caller = newCaller();
    const answer = await send(`${url}/drizzle/${route}`, { key: newKey(), caller, body: {} });
    expect(answer.status).toBe(500);
    expect(answer.json.detail).toMatch(why);
    expect(await paymentCount(caller)).toBe(0);
    expect(await keyRows(caller)).toEqual([]);
  });

  it.each([
    ['one-message', /a transaction command among several statements in one query \(BEGIN\)/],
    ['write-then-commit', /a transaction command among several statements in one query \(COMMIT\)/],
    ['commit-and-chain', /COMMIT AND CHAIN on the transaction of an @Idempotent\(\) request/],
  ])(
    "a query text with a transaction command the key client cannot turn into a savepoint's (%s): refused, nothing is kept",
    async (text, why) => {
      const caller = newCaller();
      const answer = await send(`${url}/drizzle/raw/${text}`, { key: newKey(), caller, body: {} });
      expect(answer.status).toBe(500);
      expect(answer.json.detail).toMatch(why);
      expect(await paymentCount(caller)).toBe(0);
      expect(await keyRows(caller)).toEqual([]);
    },
  );

  it('a DO block whose body has its own BEGIN and END runs in the key transaction', async () => {
    const caller = newCaller();
    expect((await send(`${url}/drizzle/raw/do-block`, { key: newKey(), caller, body: {} })).status).toBe(201);
    expect(await paymentCount(caller)).toBe(2);
    expect(await keyRows(caller)).toHaveLength(1);
  });

  it('a success the route does not store, after a statement failed in the transaction, is a 500 outcome-not-recorded: nothing was kept', async () => {
    const caller = newCaller();
    const answer = await send(`${url}/drizzle/accepted-after-failed-statement`, { key: newKey(), caller, body: {} });
    expect(answer.status).toBe(500);
    expect(answer.json.type).toMatch(/outcome-not-recorded$/);
    expect(await paymentCount(caller)).toBe(0);
    expect(await keyRows(caller)).toEqual([]);
  });

  it("a write the handler left running, after the key transaction ended, is refused: it never lands in another request's transaction", async () => {
    const caller = newCaller();
    expect((await send(`${url}/drizzle/late`, { key: newKey(), caller, body: {} })).status).toBe(201);
    // Other requests meanwhile take the same pooled connections; then the left write goes out.
    await Promise.all(
      Array.from({ length: 8 }, () =>
        send(`${url}/drizzle/inner-failure`, { key: newKey(), caller: newCaller(), body: {} }),
      ),
    );
    release(caller);
    await until(async () => lateWrites.has(caller), 'the late write to settle');
    expect(lateWrites.get(caller)).toMatch(/outside the key's transaction/);
    expect(await paymentCount(caller)).toBe(0);
  });
});
