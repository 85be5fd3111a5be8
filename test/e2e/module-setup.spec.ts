import { Controller, type DynamicModule, Module, Post, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IdempotencyConfigurationError, IdempotencyModule, Idempotent } from '../../src/index.js';
import { keyRows, paymentCount, sql } from '../support/database.js';
import { appsOn, databaseUrl, HTTP_PLATFORMS, type RunningApp } from '../support/apps.js';
import { LabController } from '../support/common-routes.controller.js';
import { newCaller, newKey, send } from '../support/http.js';
import { ModuleSetupController } from './module-setup.controller.js';

describe.each(HTTP_PLATFORMS)('on %s', (platform) => {
  const { startLab, startLabOnNamedDataSource } = appsOn(platform);

  describe('forRootAsync on a named TypeORM connection', () => {
    it('reserves keys and runs business writes on that connection, with the injected ttl', async () => {
      const lab = await startLabOnNamedDataSource('payments-db', { controllers: [LabController] });
      try {
        const caller = newCaller();
        const key = newKey();
        const first = await send(`${lab.url}/lab/scoped`, { key, caller, body: {} });
        const again = await send(`${lab.url}/lab/scoped`, { key, caller, body: {} });
        expect(first.status).toBe(201);
        expect(again.headers['idempotent-replayed']).toBe('true');
        expect(await paymentCount(caller)).toBe(1);
        const [{ ttl }] = await sql(
          `SELECT extract(epoch FROM expires_at - created_at)::int AS ttl FROM idempotency_keys WHERE caller = $1`,
          [caller],
        );
        expect(ttl).toBe(3600);
      } finally {
        await lab.close();
      }
    });

    it('fails at bootstrap with a clear error when the named connection does not exist', async () => {
      await expect(startLab({ dataSource: 'no-such-connection' })).rejects.toThrow(
        /no TypeORM DataSource named "no-such-connection"/,
      );
    });
  });

  describe("the handler's transaction", () => {
    let lab: RunningApp;
    beforeAll(async () => (lab = await startLab({}, { controllers: [LabController, ModuleSetupController] })));
    afterAll(() => lab.close());

    it("@IdempotencyManager() injects the key's EntityManager: a failure undoes its writes", async () => {
      const caller = newCaller();
      const failed = await send(`${lab.url}/lab/manager`, { key: newKey(), caller, body: { fail: true } });
      expect(failed.status).toBe(500);
      expect(await paymentCount(caller)).toBe(0);
      const ok = await send(`${lab.url}/lab/manager`, { key: newKey(), caller, body: {} });
      expect(ok.status).toBe(201);
      expect(await paymentCount(caller)).toBe(1);
    });

    it('commits the business row and the key together: both are visible once the answer arrives', async () => {
      const caller = newCaller();
      const key = newKey();
      const answer = await send(`${lab.url}/lab/scoped`, { key, caller, body: {} });
      const [payment] = await sql('SELECT id FROM payments WHERE caller = $1', [caller]);
      expect(payment.id).toBe(answer.json.id);
      expect(await keyRows(caller)).toEqual([{ key, endpoint: 'POST /lab/scoped', state: 'completed', status: 201 }]);
    });

    it('a route fingerprint narrowed to fields replays when other fields change, 422s when they do', async () => {
      const caller = newCaller();
      const key = newKey();
      const first = await send(`${lab.url}/lab/narrow`, { key, caller, body: { amount: 1, note: 'a' } });
      const otherNote = await send(`${lab.url}/lab/narrow`, { key, caller, body: { amount: 1, note: 'b' } });
      const otherAmount = await send(`${lab.url}/lab/narrow`, { key, caller, body: { amount: 2, note: 'a' } });
      expect(otherNote.headers['idempotent-replayed']).toBe('true');
      expect(otherNote.body.equals(first.body)).toBe(true);
      expect(otherAmount.status).toBe(422);
    });

    it('a body number JSON cannot hold (1e999) is another payload than null: 422, not the replay of the other', async () => {
      const caller = newCaller();
      const key = newKey();
      const first = await send(`${lab.url}/lab/narrow`, { key, caller, raw: '{"amount":null}' });
      const infinite = await send(`${lab.url}/lab/narrow`, { key, caller, raw: '{"amount":1e999}' });
      expect(first.status).toBe(201);
      expect(infinite.status).toBe(422);
      const otherKey = newKey();
      expect((await send(`${lab.url}/lab/narrow`, { key: otherKey, caller, raw: '{"amount":1e999}' })).status).toBe(
        201,
      );
      const again = await send(`${lab.url}/lab/narrow`, { key: otherKey, caller, raw: '{"amount":2e999}' });
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect((await send(`${lab.url}/lab/narrow`, { key: otherKey, caller, raw: '{"amount":-1e999}' })).status).toBe(
        422,
      );
    });
  });
});

@Controller('bad-route')
class BadRouteController {
  @Post()
  @Idempotent({ ttl: '1 hour' as unknown as '1h' })
  create(): object {
    return {};
  }
}

/** Boots an app with the module (and `controllers`), then closes it; rejects as its bootstrap does. */
async function boot(forRoot: () => DynamicModule, controllers: Type[] = []): Promise<void> {
  @Module({ imports: [TypeOrmModule.forRoot({ type: 'postgres', url: databaseUrl() }), forRoot()], controllers })
  class App {}
  const app = await NestFactory.create(App, { logger: false, abortOnError: false });
  try {
    await app.init();
  } finally {
    await app.close().catch(() => undefined);
  }
}

describe('configuration errors at bootstrap', () => {
  it('forRoot() with no options boots with every default', async () => {
    await expect(boot(() => IdempotencyModule.forRoot())).resolves.toBeUndefined();
  });

  it('an invalid module option is an IdempotencyConfigurationError naming the module options', async () => {
    const error = await boot(() =>
      IdempotencyModule.forRoot({ sweepInterval: 0, ttl: '1 hour' as unknown as '1h' }),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IdempotencyConfigurationError);
    expect((error as Error).message).toMatch(/IdempotencyModule options: option "ttl"/);
  });

  it('an invalid route option is an IdempotencyConfigurationError naming the route', async () => {
    const error = await boot(() => IdempotencyModule.forRoot({ sweepInterval: 0 }), [BadRouteController]).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(IdempotencyConfigurationError);
    expect((error as Error).message).toMatch(/@Idempotent\(\) on BadRouteController\.create: option "ttl"/);
  });
});
