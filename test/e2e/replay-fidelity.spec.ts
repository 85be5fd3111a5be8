import { appsOn, HTTP_PLATFORMS, type RunningApp } from '../support/apps.js';
import { newCaller, newKey, send } from '../support/http.js';
import { ReplayFidelityController } from './replay-fidelity.controller.js';

describe.each(HTTP_PLATFORMS)('on %s', (platform) => {
  const { startLab } = appsOn(platform);

  describe('what is replayed is what the client received', () => {
    let lab: RunningApp;
    beforeAll(
      async () =>
        (lab = await startLab(
          { replayHeaders: ['X-Replayed-Too', 'Set-Cookie', 'Link'] },
          { controllers: [ReplayFidelityController] },
        )),
    );
    afterAll(async () => {
      await lab.close();
    });

    it('replays Location and ETag, drops headers not allow-listed, never replays Set-Cookie', async () => {
      const caller = newCaller();
      const key = newKey();
      const first = await send(`${lab.url}/lab/headers`, { key, caller, body: {} });
      expect(first.headers.location).toBe('/lab/things/42');
      expect(first.headers['set-cookie']?.[0]).toContain('secret-of-the-first-caller');
      const replay = await send(`${lab.url}/lab/headers`, { key, caller, body: {} });
      expect(replay.status).toBe(201);
      expect(replay.body.equals(first.body)).toBe(true);
      expect(replay.headers.location).toBe('/lab/things/42');
      expect(replay.headers.etag).toBe('"v1"');
      expect(replay.headers['set-cookie']).toBeUndefined();
      expect(first.headers['x-trace']).toBe('set-by-the-first-run');
      expect(replay.headers['x-trace']).toBeUndefined();
      expect(replay.headers['x-replayed-too']).toBe('configured');
    });

    it('an allow-listed header with several values is replayed with all of them', async () => {
      const caller = newCaller();
      const key = newKey();
      const first = await send(`${lab.url}/lab/links`, { key, caller, body: {} });
      const replay = await send(`${lab.url}/lab/links`, { key, caller, body: {} });
      expect(first.headers.link).toBe('</lab/things/42>; rel="self", </lab/owners/7>; rel="owner"');
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.headers.link).toBe(first.headers.link);
    });

    it('headers passed to writeHead() as a list naming one twice: the first answer and the replay carry both values', async () => {
      const caller = newCaller();
      const key = newKey();
      const first = await send(`${lab.url}/lab/write-head-list`, { key, caller, body: {} });
      const replay = await send(`${lab.url}/lab/write-head-list`, { key, caller, body: {} });
      expect(first.status).toBe(201);
      expect(first.headers.link).toBe('</lab/a>; rel="a", </lab/b>; rel="b"');
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.status).toBe(201);
      expect(replay.body.equals(first.body)).toBe(true);
      expect(replay.headers.link).toBe(first.headers.link);
    });

    it('a 204 is replayed as it was sent: no body, no Content-Length', async () => {
      const caller = newCaller();
      const key = newKey();
      const first = await send(`${lab.url}/lab/no-content`, { key, caller, body: {} });
      const replay = await send(`${lab.url}/lab/no-content`, { key, caller, body: {} });
      expect([first.status, replay.status]).toEqual([204, 204]);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(first.headers['content-length']).toBeUndefined();
      expect(replay.headers['content-length']).toBeUndefined();
      expect(replay.body.length).toBe(0);
    });

    it('a handler that sends 200 itself and also returns a value: the client gets the 200 it sent, as recorded, and so does the replay', async () => {
      const caller = newCaller();
      const key = newKey();
      const first = await send(`${lab.url}/lab/self-sent-and-returned`, { key, caller, body: {} });
      const replay = await send(`${lab.url}/lab/self-sent-and-returned`, { key, caller, body: {} });
      expect(first.status).toBe(200);
      expect(first.text).not.toContain('ignored');
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.status).toBe(200);
      expect(replay.body.equals(first.body)).toBe(true);
    });

    it('a header the route sets statically (@Header) is on the first answer and on the replay', async () => {
      const caller = newCaller();
      const key = newKey();
      const first = await send(`${lab.url}/lab/headers`, { key, caller, body: {} });
      const replay = await send(`${lab.url}/lab/headers`, { key, caller, body: {} });
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(first.headers['cache-control']).toBe('no-store');
      expect(replay.headers['cache-control']).toBe('no-store');
    });

    it('a global ClassSerializerInterceptor: @Exclude() fields are absent from the first answer and from the replay', async () => {
      const caller = newCaller();
      const key = newKey();
      const first = await send(`${lab.url}/lab/serialized`, { key, caller, body: {} });
      const replay = await send(`${lab.url}/lab/serialized`, { key, caller, body: {} });
      expect(first.json).toEqual({ id: 7, name: 'Ada' });
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.text).toBe(first.text);
      expect(replay.text).not.toContain('never-leaves');
    });
  });
});
