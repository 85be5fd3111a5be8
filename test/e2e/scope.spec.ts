import { keyRows, paymentCount } from '../support/database.js';
import { appsOn, HTTP_PLATFORMS, type RunningApp } from '../support/apps.js';
import { newCaller, newKey, send } from '../support/http.js';

describe.each(HTTP_PLATFORMS)('on %s', (platform) => {
  const { startLab } = appsOn(platform);

  describe('a key belongs to (caller, method, path)', () => {
    let lab: RunningApp;
    beforeAll(async () => (lab = await startLab()));
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
      const lab = await startLab({ caller: () => undefined });
      try {
        const answer = await send(`${lab.url}/lab/scoped`, { key: newKey(), body: {} });
        expect(answer.status).toBe(401);
        expect(answer.json.type).toBe('urn:nestjs-pg-idempotency:caller-unidentified');
      } finally {
        await lab.close();
      }
    });

    it('share one scope only with anonymousCallers: "shared"', async () => {
      const lab = await startLab({ caller: () => undefined, anonymousCallers: 'shared' });
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
});
