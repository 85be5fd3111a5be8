import { Logger } from '@nestjs/common';
import { appsOn, HTTP_PLATFORMS } from '../support/apps.js';
import { keyRows, paymentCount } from '../support/database.js';
import { newCaller, newKey, send } from '../support/http.js';
import { sentQueries } from '../support/sent-queries.js';
import { PreparedStatementsController } from './prepared-statements.controller.js';

describe.each(HTTP_PLATFORMS)('prepared statements that vanish from a connection, on %s', (platform) => {
  const { startLab } = appsOn(platform);
  afterEach(() => jest.restoreAllMocks());

  it('gone when the outcome is recorded: 503 store-unavailable with Retry-After, nothing kept, a log line naming the cause and the option; from then on the statements go whole and the retry runs once', async () => {
    const error = jest.spyOn(Logger.prototype, 'error');
    const lab = await startLab({}, { controllers: [PreparedStatementsController] });
    try {
      const caller = newCaller();
      const key = newKey();
      const failed = await send(`${lab.url}/prepared-statements/deallocated`, {
        key,
        caller,
        body: {},
        headers: { 'x-deallocate': '1' },
      });
      expect(failed.status).toBe(503);
      expect(failed.headers['retry-after']).toMatch(/^[1-9]\d*$/);
      expect(failed.json).toMatchObject({ type: 'urn:nestjs-pg-idempotency:store-unavailable', status: 503 });
      expect(await paymentCount(caller)).toBe(0);
      expect(await keyRows(caller)).toEqual([]);
      const logged = error.mock.calls
        .map(([message]) => String(message))
        .filter((message) => message.includes('recording an idempotent outcome failed'));
      expect(logged).toHaveLength(1);
      expect(logged[0]).toMatch(
        /prepared statements vanished.*pooler in transaction mode \(PgBouncer\).*preparedStatements: false/,
      );

      const sent = await sentQueries(() =>
        send(`${lab.url}/prepared-statements/deallocated`, { key, caller, body: {} }),
      );
      expect(sent.some((text) => /\b(PREPARE|EXECUTE)\b/.test(text))).toBe(false);
      expect(await paymentCount(caller)).toBe(1);
      expect(await keyRows(caller)).toEqual([
        { key, endpoint: 'POST /prepared-statements/deallocated', state: 'completed', status: 201 },
      ]);
    } finally {
      await lab.close();
    }
  });
});
