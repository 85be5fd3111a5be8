import { keyRows, paymentCount } from '../support/database.js';
import { appsOn, HTTP_PLATFORMS, type RunningApp } from '../support/apps.js';
import { EnvelopeInterceptor, FidelityController } from './replay-pipeline.controller.js';
import { newCaller, newKey, send } from '../support/http.js';
import { expectFaithfulReplay } from '../support/replay-assertions.js';

describe.each(HTTP_PLATFORMS)('on %s', (platform) => {
  const { startLab } = appsOn(platform);

  describe('a replay is what the pipeline sent the first time, no more', () => {
    let lab: RunningApp;
    beforeAll(async () => (lab = await startLab({}, { controllers: [FidelityController] })));
    afterAll(() => lab.close());

    it('@HttpCode(202), a static @Header, a Location set by the handler through @Res({ passthrough: true })', async () => {
      const caller = newCaller();
      const key = newKey();
      const first = await send(`${lab.url}/fidelity/accepted`, { key, caller, body: {} });
      const replay = await send(`${lab.url}/fidelity/accepted`, { key, caller, body: {} });
      expect(first.status).toBe(202);
      expect(first.headers.location).toBe(`/fidelity/payments/${first.json.id}`);
      expectFaithfulReplay(first, replay);
      expect(replay.headers.location).toBe(first.headers.location);
      expect(replay.headers['x-static']).toBe('set-by-the-route');
      // A dynamic header off the allow-list belongs to the first run only.
      expect(first.headers['x-run-id']).toBeDefined();
      expect(replay.headers['x-run-id']).toBeUndefined();
      expect(await paymentCount(caller)).toBe(1);
    });

    it('a body validated by the global ValidationPipe; and its 400 when invalid', async () => {
      const caller = newCaller();
      const [key, badKey] = [newKey(), newKey()];
      const body = { amount: 12, reference: 'invoice 7' };
      const first = await send(`${lab.url}/fidelity/transfer`, { key, caller, body });
      expect(first.json).toEqual({ id: expect.any(String), amount: 12, reference: 'invoice 7' });
      expectFaithfulReplay(first, await send(`${lab.url}/fidelity/transfer`, { key, caller, body }));

      const invalid = { amount: -1, reference: 'x', extra: true };
      const refused = await send(`${lab.url}/fidelity/transfer`, { key: badKey, caller, body: invalid });
      expect(refused.status).toBe(400);
      expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
      expectFaithfulReplay(refused, await send(`${lab.url}/fidelity/transfer`, { key: badKey, caller, body: invalid }));
      expect(await paymentCount(caller)).toBe(1);
    });

    it('a route exception filter that answers 402 with a fresh id: the replay keeps the first id', async () => {
      const caller = newCaller();
      const key = newKey();
      const first = await send(`${lab.url}/fidelity/declined`, { key, caller, body: {} });
      expect(first.status).toBe(402);
      expect(first.json).toEqual({ code: 'card_declined', declineId: expect.any(String) });
      expectFaithfulReplay(first, await send(`${lab.url}/fidelity/declined`, { key, caller, body: {} }));
      expect(await paymentCount(caller)).toBe(0);
      expect(await keyRows(caller)).toEqual([
        { key, endpoint: 'POST /fidelity/declined', state: 'completed', status: 402 },
      ]);
    });
  });

  it('a global interceptor that adds a fresh nonce: the replay keeps the first nonce, adds no field', async () => {
    const lab = await startLab(
      {},
      { controllers: [FidelityController], configure: (app) => app.useGlobalInterceptors(new EnvelopeInterceptor()) },
    );
    try {
      const caller = newCaller();
      const key = newKey();
      const body = { amount: 5, reference: 'envelope' };
      const first = await send(`${lab.url}/fidelity/transfer`, { key, caller, body });
      expect(first.json).toEqual({
        data: { id: expect.any(String), amount: 5, reference: 'envelope' },
        meta: { nonce: expect.any(String) },
      });
      const replay = await send(`${lab.url}/fidelity/transfer`, { key, caller, body });
      expectFaithfulReplay(first, replay);
      expect(replay.json.meta.nonce).toBe(first.json.meta.nonce);
    } finally {
      await lab.close();
    }
  });
});
