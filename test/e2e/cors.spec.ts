import { handlerBackend } from '../support/database.js';
import { withIdempotencyCors } from '../../src/index.js';
import { appsOn, HTTP_PLATFORMS, type RunningApp } from '../support/apps.js';
import { LabController } from '../support/common-routes.controller.js';
import { type Answer, newCaller, newKey, send } from '../support/http.js';
import { release } from '../support/latch.js';

const origin = 'https://shop.example';

/** A browser's preflight for an idempotent JSON POST with a bearer token. */
function preflight(url: string): Promise<Answer> {
  return send(url, {
    method: 'OPTIONS',
    caller: null,
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization,content-type,idempotency-key',
    },
  });
}

const listed = (value: string | string[] | undefined): string[] =>
  String(value ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);

describe.each(HTTP_PLATFORMS)('on %s', (platform) => {
  const { startLab } = appsOn(platform);

  describe('CORS with withIdempotencyCors()', () => {
    let lab: RunningApp;
    beforeAll(
      async () =>
        (lab = await startLab(
          {},
          {
            controllers: [LabController],
            configure: (app) =>
              app.enableCors(withIdempotencyCors({ origin, allowedHeaders: ['Authorization', 'Content-Type'] })),
          },
        )),
    );
    afterAll(() => lab.close());

    it('the preflight allows the Idempotency-Key request header', async () => {
      const answer = await preflight(`${lab.url}/lab/scoped`);
      expect(answer.status).toBeLessThan(300);
      expect(answer.headers['access-control-allow-origin']).toBe(origin);
      expect(listed(answer.headers['access-control-allow-headers'])).toEqual(
        expect.arrayContaining(['authorization', 'content-type', 'idempotency-key']),
      );
    });

    it('the first answer and its replay expose Idempotent-Replayed and Retry-After', async () => {
      const caller = newCaller();
      const key = newKey();
      const first = await send(`${lab.url}/lab/scoped`, { key, caller, body: {}, headers: { origin } });
      const replay = await send(`${lab.url}/lab/scoped`, { key, caller, body: {}, headers: { origin } });
      expect(replay.headers['idempotent-replayed']).toBe('true');
      for (const answer of [first, replay]) {
        expect(answer.status).toBe(201);
        expect(answer.headers['access-control-allow-origin']).toBe(origin);
        expect(listed(answer.headers['access-control-expose-headers'])).toEqual(
          expect.arrayContaining(['idempotent-replayed', 'retry-after']),
        );
      }
    });

    it('a 409 for a duplicate in flight carries Retry-After and exposes it', async () => {
      const caller = newCaller();
      const key = newKey();
      const first = send(`${lab.url}/lab/held-write`, { key, caller, body: {}, headers: { origin } });
      await handlerBackend();
      const duplicate = await send(`${lab.url}/lab/held-write`, { key, caller, body: {}, headers: { origin } });
      release(caller);
      await first;
      expect(duplicate.status).toBe(409);
      expect(duplicate.headers['retry-after']).toBe('1');
      expect(duplicate.headers['access-control-allow-origin']).toBe(origin);
      expect(listed(duplicate.headers['access-control-expose-headers'])).toContain('retry-after');
    });
  });

  it('without the helper, the same app CORS options refuse Idempotency-Key and expose neither header', async () => {
    const lab = await startLab(
      {},
      {
        controllers: [LabController],
        configure: (app) => app.enableCors({ origin, allowedHeaders: ['Authorization', 'Content-Type'] }),
      },
    );
    try {
      const answer = await preflight(`${lab.url}/lab/scoped`);
      expect(listed(answer.headers['access-control-allow-headers'])).not.toContain('idempotency-key');
      const created = await send(`${lab.url}/lab/scoped`, {
        key: newKey(),
        caller: newCaller(),
        body: {},
        headers: { origin },
      });
      expect(listed(created.headers['access-control-expose-headers'])).not.toContain('idempotent-replayed');
      expect(listed(created.headers['access-control-expose-headers'])).not.toContain('retry-after');
    } finally {
      await lab.close();
    }
  });
});
