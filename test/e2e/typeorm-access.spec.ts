import { Logger } from '@nestjs/common';
import { DataSource, type QueryRunner } from 'typeorm';
import { Payment } from '../../src/demo/payments/payment.entity.js';
import { appsOn, databaseUrl, HTTP_PLATFORMS } from '../support/apps.js';
import { keyRows, paymentCount } from '../support/database.js';
import { newCaller, newKey, send, validPayment } from '../support/http.js';
import { sentQueries } from '../support/sent-queries.js';
import { LabController } from '../support/common-routes.controller.js';
import { FailurePolicyController } from './failure-policy.controller.js';

/**
 * A DataSource whose QueryRunners keep their transaction depth behind an accessor, as a TypeORM
 * release that moved it into private state would: TypeORM's own methods still work, but the
 * field the adapter's combined messages set is not a plain field any more.
 */
async function dataSourceWithHiddenTransactionState(): Promise<DataSource> {
  const dataSource = await new DataSource({
    type: 'postgres',
    url: databaseUrl(),
    entities: [Payment],
    extra: { max: 10 },
  }).initialize();
  const create = dataSource.createQueryRunner.bind(dataSource);
  dataSource.createQueryRunner = (mode) => {
    const queryRunner: QueryRunner = create(mode);
    let depth = 0;
    Object.defineProperty(queryRunner, 'transactionDepth', {
      get: () => depth,
      set: (value: number) => (depth = value),
      configurable: true,
    });
    return queryRunner;
  };
  return dataSource;
}

describe.each(HTTP_PLATFORMS)('how the TypeORM adapter reaches the transaction, on %s', (platform) => {
  const { startLab } = appsOn(platform);
  const { startLab: startLabOnPublicApi } = appsOn(platform, 'typeorm public API');

  afterEach(() => jest.restoreAllMocks());

  it("falls back to TypeORM's public API, with one warning naming the TypeORM version, when the QueryRunner's transaction state is not where it expects", async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn');
    const dataSource = await dataSourceWithHiddenTransactionState();
    const lab = await startLab({ dataSource }, { controllers: [FailurePolicyController] });
    try {
      const warnings = warn.mock.calls
        .map(([message]) => String(message))
        .filter((message) => message.includes('public API'));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/^TypeORM \d+\.\d+\.\d+: a new QueryRunner's transaction state is not in the fields/);

      const caller = newCaller();
      const key = newKey();
      const first = await send(`${lab.url}/payments`, { key, caller, body: validPayment });
      const replay = await send(`${lab.url}/payments`, { key, caller, body: validPayment });
      expect(first.status).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body.equals(first.body)).toBe(true);
      const declined = await send(`${lab.url}/lab/reject-after-write`, { key: newKey(), caller, body: {} });
      expect(declined.status).toBe(422);
      expect(await paymentCount(caller)).toBe(1);
      expect(await keyRows(caller)).toHaveLength(2);
    } finally {
      await lab.close();
      await dataSource.destroy();
    }
  });

  it('costs two more round trips per executed request than the combined messages (START TRANSACTION and COMMIT of their own)', async () => {
    const combined = await startLab({ replayCache: false }, { controllers: [LabController] });
    const publicApi = await startLabOnPublicApi({ replayCache: false }, { controllers: [LabController] });
    try {
      const caller = newCaller();
      const count = async (url: string, key: string) =>
        (await sentQueries(() => send(`${url}/lab/twin`, { key, caller, body: {} }))).length;
      // Warm both up: connections, prepared statements.
      await count(combined.url, newKey());
      await count(publicApi.url, newKey());
      const [first, second] = [newKey(), newKey()];
      expect(await count(combined.url, first)).toBe(4);
      expect(await count(publicApi.url, second)).toBe(6);
      // A replay (the replay cache off): the lookup in a transaction of its own, then its end.
      expect(await count(combined.url, first)).toBe(2);
      expect(await count(publicApi.url, second)).toBe(3);
      expect(await paymentCount(caller)).toBe(4);
    } finally {
      await combined.close();
      await publicApi.close();
    }
  });
});
