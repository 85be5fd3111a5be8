import { request } from 'node:http';
import { appsOn, HTTP_PLATFORMS } from '../support/apps.js';
import { handlerBackend, keyRows, paymentCount, sql, until } from '../support/database.js';
import { newCaller, newKey, send } from '../support/http.js';
import { ConnectionLostController } from './connection-lost.controller.js';

describe.each(HTTP_PLATFORMS)('on %s', (platform) => {
  const { startLab } = appsOn(platform);

  describe('the app shut down while a handler whose client went away holds its key', () => {
    it("closes TypeORM's pool under the open key transaction at once: the connection ends, nothing is kept, and the retry runs once", async () => {
      const lab = await startLab({}, { controllers: [ConnectionLostController] });
      const caller = newCaller();
      const key = newKey();
      // The handler writes, then waits (up to 30 s) until its connection is gone and queries again.
      const client = request(`${lab.url}/connection-lost`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${caller}`,
          'idempotency-key': key,
          'content-type': 'application/json',
          'x-await-connection-loss': '1',
        },
      });
      client.on('error', () => undefined);
      client.end('{}');
      const backend = await handlerBackend();
      client.destroy();
      const started = Date.now();
      await lab.close();
      expect(Date.now() - started).toBeLessThan(15_000);
      // The key transaction's connection was closed with the pool, not left open in its transaction.
      await until(
        async () => (await sql('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [backend])).length === 0,
        'the backend to end',
      );
      expect(await paymentCount(caller)).toBe(0);
      expect(await keyRows(caller)).toEqual([]);

      const other = await startLab({}, { controllers: [ConnectionLostController] });
      try {
        const retry = await send(`${other.url}/connection-lost`, { key, caller, body: {} });
        expect(retry.status).toBe(201);
        expect(await paymentCount(caller)).toBe(1);
      } finally {
        await other.close();
      }
    }, 60_000);
  });
});
