import { keyRows, paymentCount, sql } from '../support/database.js';
import { appsOn, hostSettings, PLATFORMS_AND_DEMO_HOSTS, type RunningApp } from '../support/apps.js';
import { newCaller, newKey, send, validPayment } from '../support/http.js';
import { startDemoProcess, waitFor } from '../support/processes.js';

describe.each(PLATFORMS_AND_DEMO_HOSTS)('on %s, %s', (platform, host) => {
  const { startDemo } = appsOn(platform, host);

  describe('a process killed mid-request (transactional mode)', () => {
    let demo: RunningApp;
    beforeAll(async () => (demo = await startDemo()));
    afterAll(() => demo.close());

    it('leaves no stuck key and no half-written payment: the retry runs once', async () => {
      const victim = await startDemoProcess({
        DEMO_LATENCY_MS: '10000',
        DEMO_PLATFORM: platform,
        ...hostSettings(host).env,
      });
      const caller = newCaller();
      const key = newKey();
      const inFlight = send(`${victim.url}/payments`, { key, caller, body: validPayment }).catch(
        (error: Error) => error,
      );

      // The handler holds the key: its transaction has written the payment (it has a transaction
      // id: the key's lock and lookup alone assign none) and waits.
      await waitFor(
        'the handler to hold the key',
        async () =>
          (
            await sql(
              `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction' AND backend_xid IS NOT NULL`,
            )
          ).length === 1,
      );
      const duplicate = await send(`${victim.url}/payments`, { key, caller, body: validPayment });
      expect(duplicate.status).toBe(409);

      await victim.kill();
      expect(await inFlight).toHaveProperty('code', 'ECONNRESET');

      // The server notices the dead connection and rolls its transaction back at once: no TTL wait.
      const retry = await send(`${demo.url}/payments`, { key, caller, body: validPayment });
      expect(retry.status).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
      expect(await paymentCount(caller)).toBe(1);
      expect(await keyRows(caller)).toEqual([{ key, endpoint: 'POST /payments', state: 'completed', status: 201 }]);
    });
  });
});
