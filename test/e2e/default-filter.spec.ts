import { handlerBackend } from '../support/database.js';
import { appsOn, HTTP_PLATFORMS, type RunningApp } from '../support/apps.js';
import { LabController } from '../support/common-routes.controller.js';
import { newCaller, newKey, send } from '../support/http.js';
import { release } from '../support/latch.js';
import { defaultFilterProblemContentType } from '../support/loaded-versions.js';

describe.each(HTTP_PLATFORMS)('on %s', (platform) => {
  const { startLab } = appsOn(platform);
  // application/problem+json, except on NestJS 11 with Express (its adapter rewrites it).
  const problemContentType = defaultFilterProblemContentType(platform);

  describe("with Nest's default exception filter (no filter of the app's)", () => {
    let lab: RunningApp;
    beforeAll(async () => (lab = await startLab({}, { controllers: [LabController], problemFilter: false })));
    afterAll(() => lab.close());

    it.each([
      ['a missing key', undefined, 400, 'urn:nestjs-pg-idempotency:key-missing'],
      ['a malformed key', 'not-a-key', 400, 'urn:nestjs-pg-idempotency:key-malformed'],
    ])('%s is answered as the problem, as it is', async (_case, key, status, type) => {
      const answer = await send(`${lab.url}/lab/scoped`, { key, caller: newCaller(), body: {} });
      expect(answer.status).toBe(status);
      expect(answer.headers['content-type']).toMatch(problemContentType);
      expect(answer.json).toEqual({ type, title: expect.any(String), status, detail: expect.any(String) });
    });

    it('a 409 for a duplicate in flight keeps its Retry-After', async () => {
      const caller = newCaller();
      const key = newKey();
      const first = send(`${lab.url}/lab/held-write`, { key, caller, body: {} });
      await handlerBackend();
      const duplicate = await send(`${lab.url}/lab/held-write`, { key, caller, body: {} });
      release(caller);
      await first;
      expect(duplicate.status).toBe(409);
      expect(duplicate.headers['retry-after']).toBe('1');
      expect(duplicate.headers['content-type']).toMatch(problemContentType);
      expect(duplicate.json).toMatchObject({ type: 'urn:nestjs-pg-idempotency:key-in-use', status: 409 });
    });
  });
});
