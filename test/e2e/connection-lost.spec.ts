import { handlerBackend, keyRows, paymentCount, sql } from '../support/database.js';
import { appsOn, HTTP_PLATFORMS, type RunningApp } from '../support/apps.js';
import { newCaller, newKey, send } from '../support/http.js';
import { ConnectionLostController } from './connection-lost.controller.js';

describe.each(HTTP_PLATFORMS)('on %s', (platform) => {
  const { startLab } = appsOn(platform);

  describe("the key's connection lost while the handler is between two queries", () => {
    let lab: RunningApp;
    beforeAll(async () => (lab = await startLab({}, { controllers: [ConnectionLostController] })));
    afterAll(() => lab.close());

    it.each([
      ['through the repository it had', {}],
      // Behind a pooler repointed at a new primary, a write on any other connection commits at once.
      ['through IdempotencyTransaction, asked anew: never on another connection', { 'x-write-again': '1' }],
    ])(
      "the handler querying again %s: answers 503 store-unavailable with Retry-After (TypeORM's QueryRunnerAlreadyReleasedError), keeps nothing, and the retry runs once",
      async (_, headers) => {
        const caller = newCaller();
        const key = newKey();
        const answer = send(`${lab.url}/connection-lost`, {
          key,
          caller,
          body: {},
          headers: { 'x-await-connection-loss': '1', ...headers },
        });
        await sql('SELECT pg_terminate_backend($1)', [await handlerBackend()]);
        const failed = await answer;
        expect(failed.status).toBe(503);
        expect(failed.headers['retry-after']).toMatch(/^[1-9]\d*$/);
        expect(failed.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(failed.json).toMatchObject({ type: 'urn:nestjs-pg-idempotency:store-unavailable', status: 503 });
        expect(await paymentCount(caller)).toBe(0);
        expect(await keyRows(caller)).toEqual([]);

        const retry = await send(`${lab.url}/connection-lost`, { key, caller, body: {} });
        expect(retry.status).toBe(201);
        expect(await paymentCount(caller)).toBe(1);
        expect(await keyRows(caller)).toEqual([
          { key, endpoint: 'POST /connection-lost', state: 'completed', status: 201 },
        ]);
      },
    );
  });
});
