import { keyRows, paymentCount, sql } from '../support/database.js';
import { appsOn, HTTP_PLATFORMS, type RunningApp } from '../support/apps.js';
import { LabController } from '../support/common-routes.controller.js';
import { newCaller, newKey, send } from '../support/http.js';
import { KeyHeaderController } from './key-header.controller.js';
import { LabV2Controller, ScopeController } from './scope.controller.js';

describe.each(HTTP_PLATFORMS)('on %s', (platform) => {
  const { startLab } = appsOn(platform);

  describe('a key belongs to (caller, method, path)', () => {
    let lab: RunningApp;
    beforeAll(
      async () =>
        (lab = await startLab(
          {},
          { controllers: [LabController, ScopeController, LabV2Controller, KeyHeaderController] },
        )),
    );
    afterAll(async () => {
      await lab.close();
    });

    it('the same key from another caller is another request, never a replay of theirs', async () => {
      const key = newKey();
      const [alice, mallory] = [newCaller(), newCaller()];
      const first = await send(`${lab.url}/lab/scoped`, { key, caller: alice, body: {} });
      const other = await send(`${lab.url}/lab/scoped`, { key, caller: mallory, body: {} });
      expect(other.status).toBe(201);
      expect(other.headers['idempotent-replayed']).toBeUndefined();
      expect(other.json.id).not.toBe(first.json.id);
      expect(await paymentCount(alice)).toBe(1);
      expect(await paymentCount(mallory)).toBe(1);
    });

    it('the same key on another method or another version prefix is another request', async () => {
      const key = newKey();
      const caller = newCaller();
      const post = await send(`${lab.url}/lab/scoped`, { key, caller, body: {} });
      const patch = await send(`${lab.url}/lab/scoped`, { method: 'PATCH', key, caller, body: {} });
      const v2 = await send(`${lab.url}/v2/lab/scoped`, { key, caller, body: {} });
      expect([post.status, patch.status, v2.status]).toEqual([201, 200, 201]);
      expect([patch.headers['idempotent-replayed'], v2.headers['idempotent-replayed']]).toEqual([undefined, undefined]);
      expect(await paymentCount(caller)).toBe(3);
      expect((await keyRows(caller)).map((row) => row.endpoint).sort()).toEqual([
        'PATCH /lab/scoped',
        'POST /lab/scoped',
        'POST /v2/lab/scoped',
      ]);
      const replay = await send(`${lab.url}/v2/lab/scoped`, { key, caller, body: {} });
      expect(replay.body.equals(v2.body)).toBe(true);
    });

    // Spellings the platform's router sends to the same route: Express ignores case and a
    // trailing slash by default, Fastify decodes percent-encoding before matching.
    const spellings =
      platform === 'express' ? ['/lab/twin/', '/LAB/Twin', '/lab/Twin/'] : ['/lab/t%77in', '/l%61b/twin'];

    it.each(spellings)(
      'a retry spelled %s reaches the same route and the same scope: replayed, not run again',
      async (spelling) => {
        const key = newKey();
        const caller = newCaller();
        const first = await send(`${lab.url}/lab/twin`, { key, caller, body: {} });
        const retry = await send(`${lab.url}${spelling}`, { key, caller, body: {} });
        expect(first.status).toBe(201);
        expect(retry.status).toBe(201);
        expect(retry.headers['idempotent-replayed']).toBe('true');
        expect(retry.body.equals(first.body)).toBe(true);
        expect(await paymentCount(caller)).toBe(1);
        expect((await keyRows(caller)).map((row) => row.endpoint)).toEqual(['POST /lab/twin']);
      },
    );

    it('a path parameter is part of the scope as the handler receives it: encoded or not, one scope; another value, another scope', async () => {
      const key = newKey();
      const caller = newCaller();
      const first = await send(`${lab.url}/lab/status/400`, { key, caller, body: {} });
      const encoded = await send(`${lab.url}/lab/status/%34%30%30`, { key, caller, body: {} });
      const other = await send(`${lab.url}/lab/status/404`, { key, caller, body: {} });
      expect([first.status, encoded.status, other.status]).toEqual([400, 400, 404]);
      expect([encoded.headers['idempotent-replayed'], other.headers['idempotent-replayed']]).toEqual([
        'true',
        undefined,
      ]);
      expect((await keyRows(caller)).map((row) => row.endpoint).sort()).toEqual([
        'POST /lab/status/400',
        'POST /lab/status/404',
      ]);
    });

    // A wildcard's value as the handler receives it: Express gives its segments (a `%2F` stays
    // inside one), Fastify one decoded string.
    const wildcardSpellings =
      platform === 'express' ? ['/LAB/Deep/a/b', '/lab/deep/%61/b'] : ['/lab/deep/%61/b', '/l%61b/deep/a%2Fb'];
    const otherValue = platform === 'express' ? '/lab/deep/a%2Fb' : '/lab/deep/a/b/';

    it.each(wildcardSpellings)(
      'a wildcard route: a retry spelled %s has the same value, so the same scope: replayed, not run again',
      async (spelling) => {
        const key = newKey();
        const caller = newCaller();
        const first = await send(`${lab.url}/lab/deep/a/b`, { key, caller, body: {} });
        const retry = await send(`${lab.url}${spelling}`, { key, caller, body: {} });
        const other = await send(`${lab.url}${otherValue}`, { key, caller, body: {} });
        expect([first.status, retry.status, other.status]).toEqual([201, 201, 201]);
        expect([retry.headers['idempotent-replayed'], other.headers['idempotent-replayed']]).toEqual([
          'true',
          undefined,
        ]);
        expect(retry.body.equals(first.body)).toBe(true);
        expect(await paymentCount(caller)).toBe(2);
        expect((await keyRows(caller)).map((row) => row.endpoint).sort()).toEqual(
          ['POST /lab/deep/a/b', `POST ${otherValue}`].sort(),
        );
      },
    );

    it('scope parts never blur into each other: (caller "…ab", key "c…") is not (caller "…a", key "bc…")', async () => {
      const base = newCaller();
      const suffix = newKey();
      const first = await send(`${lab.url}/lab/printable`, { key: `c:${suffix}`, caller: `${base}:ab`, body: {} });
      const second = await send(`${lab.url}/lab/printable`, { key: `bc:${suffix}`, caller: `${base}:a`, body: {} });
      expect([first.status, second.status]).toEqual([201, 201]);
      expect(second.headers['idempotent-replayed']).toBeUndefined();
      expect(second.json).toEqual({ length: suffix.length + 3 });
    });

    it('nor does a separator: (caller "…:a", key "b:…") is not (caller "…", key "a:b:…")', async () => {
      const base = newCaller();
      const suffix = newKey();
      const first = await send(`${lab.url}/lab/printable`, { key: `b:${suffix}`, caller: `${base}:a`, body: {} });
      const second = await send(`${lab.url}/lab/printable`, { key: `a:b:${suffix}`, caller: base, body: {} });
      expect([first.status, second.status]).toEqual([201, 201]);
      expect(second.headers['idempotent-replayed']).toBeUndefined();
      expect(second.json).toEqual({ length: suffix.length + 4 });
    });
  });

  describe('unidentified callers', () => {
    it('are refused with 401 caller-unidentified by default, so no response is shared between them', async () => {
      const lab = await startLab({ caller: () => undefined }, { controllers: [LabController] });
      try {
        const answer = await send(`${lab.url}/lab/scoped`, { key: newKey(), body: {} });
        expect(answer.status).toBe(401);
        expect(answer.json.type).toBe('urn:nestjs-pg-idempotency:caller-unidentified');
      } finally {
        await lab.close();
      }
    });

    it('share one scope only with anonymousCallers: "shared"', async () => {
      const lab = await startLab(
        { caller: () => undefined, anonymousCallers: 'shared' },
        { controllers: [LabController] },
      );
      try {
        const key = newKey();
        const first = await send(`${lab.url}/lab/scoped`, { key, caller: newCaller(), body: {} });
        const second = await send(`${lab.url}/lab/scoped`, { key, caller: newCaller(), body: {} });
        expect(first.status).toBe(201);
        expect(second.headers['idempotent-replayed']).toBe('true');
      } finally {
        await lab.close();
      }
    });
  });
  describe('caller ids that cannot scope a key', () => {
    /** The caller id travels as JSON with \\u escapes (as a token's claim would reach a resolver). */
    const asHeader = (id: string) =>
      JSON.stringify(id).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    let lab: RunningApp;
    beforeAll(
      async () =>
        (lab = await startLab(
          {
            keyFormat: 'printable-ascii',
            caller: (request: { headers: Record<string, string> }) => JSON.parse(request.headers['x-caller-json']),
          },
          { controllers: [LabController, ScopeController] },
        )),
    );
    afterAll(() => lab.close());
    const keyRowCount = async (key: string) =>
      (await sql('SELECT count(*)::int AS n FROM idempotency_keys WHERE key = $1', [key]))[0].n;

    it.each([
      ['an unpaired high surrogate', 'alice\ud800'],
      ['an unpaired low surrogate', 'alice\udfff'],
      ['a NUL character', 'ali\u0000ce'],
      ['257 bytes of UTF-8', `${'\u00e9'.repeat(128)}a`],
    ])('%s: 401 caller-unidentified, nothing runs, nothing stored', async (_case, id) => {
      const bearer = newCaller();
      const key = newKey();
      const answer = await send(`${lab.url}/lab/scoped`, {
        key,
        caller: bearer,
        body: {},
        headers: { 'x-caller-json': asHeader(id) },
      });
      expect(answer.status).toBe(401);
      expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(answer.json.type).toBe('urn:nestjs-pg-idempotency:caller-unidentified');
      expect(await paymentCount(bearer)).toBe(0);
      expect(await keyRowCount(key)).toBe(0);
    });

    it('callers that differ only where a driver would replace a character keep separate scopes', async () => {
      const key = newKey();
      const bearers = [newCaller(), newCaller()];
      const ids = ['alice\ufffd', 'alice\ud83d\ude00'];
      for (const [index, id] of ids.entries()) {
        const answer = await send(`${lab.url}/lab/scoped`, {
          key,
          caller: bearers[index],
          body: {},
          headers: { 'x-caller-json': asHeader(id) },
        });
        expect(answer.status).toBe(201);
        expect(answer.headers['idempotent-replayed']).toBeUndefined();
      }
      expect(await paymentCount(bearers[0])).toBe(1);
      expect(await paymentCount(bearers[1])).toBe(1);
    });

    it('the longest caller (256 bytes), key (255) and endpoint (2048) together are stored and replayed', async () => {
      const bearer = newCaller();
      const key = `k${newKey()}`.padEnd(255, 'x');
      const path = `/lab/deep/${'segment/'.repeat(254)}`.padEnd(2048 - 'POST '.length, 'z');
      const headers = { 'x-caller-json': asHeader('\u00e9'.repeat(128)) };
      const first = await send(`${lab.url}${path}`, { key, caller: bearer, body: {}, headers });
      const again = await send(`${lab.url}${path}`, { key, caller: bearer, body: {}, headers });
      expect(first.status).toBe(201);
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body.equals(first.body)).toBe(true);
      expect(await paymentCount(bearer)).toBe(1);
    });
  });
});
