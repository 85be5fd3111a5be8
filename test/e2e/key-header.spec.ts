import { keyRows, paymentCount } from '../support/database.js';
import { appsOn, HTTP_PLATFORMS, type RunningApp } from '../support/apps.js';
import { newCaller, newKey, send, sendRawBytes, validPayment } from '../support/http.js';
import { KeyHeaderController } from './key-header.controller.js';
import { ScopeController } from './scope.controller.js';
import { LabController } from '../support/common-routes.controller.js';

describe.each(HTTP_PLATFORMS)('on %s', (platform) => {
  const { startDemo, startLab } = appsOn(platform);

  describe('the Idempotency-Key header', () => {
    let demo: RunningApp;
    let lab: RunningApp;
    beforeAll(async () => {
      demo = await startDemo();
      lab = await startLab({}, { controllers: [KeyHeaderController, ScopeController] });
    });
    afterAll(async () => {
      await demo.close();
      await lab.close();
    });

    it('is required: without it the answer is 400 key-missing and nothing runs', async () => {
      const caller = newCaller();
      const answer = await send(`${demo.url}/payments`, { caller, body: validPayment });
      expect(answer.status).toBe(400);
      expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(answer.json).toMatchObject({ type: 'urn:nestjs-pg-idempotency:key-missing', status: 400 });
      expect(await paymentCount(caller)).toBe(0);
    });

    it.each([
      ['malformed', 'not-a-uuid'],
      ['empty', ''],
      ['empty quoted', '""'],
      ['over-long', 'a'.repeat(256)],
      ['several values in one line', `${newKey()}, ${newKey()}`],
      ['an sf-list', `"${newKey()}", "${newKey()}"`],
      ['badly quoted', `"${newKey()}`],
    ])('%s: 400 key-malformed problem, nothing runs, nothing stored', async (_case, key) => {
      const caller = newCaller();
      const answer = await send(`${demo.url}/payments`, { key, caller, body: validPayment });
      expect(answer.status).toBe(400);
      expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(answer.json).toMatchObject({
        type: 'urn:nestjs-pg-idempotency:key-malformed',
        status: 400,
        title: expect.any(String),
        detail: expect.any(String),
      });
      expect(await paymentCount(caller)).toBe(0);
      expect(await keyRows(caller)).toEqual([]);
    });

    it('several header lines: 400 key-malformed', async () => {
      const caller = newCaller();
      const answer = await send(`${demo.url}/payments`, { key: [newKey(), newKey()], caller, body: validPayment });
      expect(answer.status).toBe(400);
      expect(answer.json.type).toBe('urn:nestjs-pg-idempotency:key-malformed');
      expect(await paymentCount(caller)).toBe(0);
    });

    it('a 255-character key is stored whole and replayed (widened format)', async () => {
      const caller = newCaller();
      const key = `k${newKey()}`.padEnd(255, 'x');
      const first = await send(`${lab.url}/lab/printable`, { key, caller, body: {} });
      const again = await send(`${lab.url}/lab/printable`, { key, caller, body: {} });
      expect(first.status).toBe(201);
      expect(first.json).toEqual({ length: 255 });
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect((await keyRows(caller))[0].key).toBe(key);
      expect((await send(`${lab.url}/lab/printable`, { key: `${key}x`, caller, body: {} })).status).toBe(400);
    });

    it('is optional on a route with required: false, which then runs without de-duplication', async () => {
      const caller = newCaller();
      expect((await send(`${lab.url}/lab/optional`, { caller, body: {} })).status).toBe(201);
      expect((await send(`${lab.url}/lab/optional`, { caller, body: {} })).status).toBe(201);
      expect(await paymentCount(caller)).toBe(2);
      expect(await keyRows(caller)).toEqual([]);
      const key = newKey();
      await send(`${lab.url}/lab/optional`, { key, caller, body: {} });
      expect((await send(`${lab.url}/lab/optional`, { key, caller, body: {} })).headers['idempotent-replayed']).toBe(
        'true',
      );
      expect(await paymentCount(caller)).toBe(3);
    });

    it('is opaque and case-sensitive: the upper-case form of a UUID is another key', async () => {
      const caller = newCaller();
      const key = newKey();
      await send(`${demo.url}/payments`, { key, caller, body: validPayment });
      const upper = await send(`${demo.url}/payments`, { key: key.toUpperCase(), caller, body: validPayment });
      expect(upper.status).toBe(201);
      expect(upper.headers['idempotent-replayed']).toBeUndefined();
      expect(await paymentCount(caller)).toBe(2);
    });

    it('a request path over 2048 characters: 414 endpoint-too-long, nothing runs', async () => {
      const caller = newCaller();
      const answer = await send(`${lab.url}/lab/deep/${'segment/'.repeat(270)}`, {
        key: newKey(),
        caller,
        body: {},
      });
      expect(answer.status).toBe(414);
      expect(answer.json.type).toBe('urn:nestjs-pg-idempotency:endpoint-too-long');
      expect(await paymentCount(caller)).toBe(0);
      // 'POST /lab/deep/' + 254 × 'segment/' is 2047 characters: it runs.
      const longest = await send(`${lab.url}/lab/deep/${'segment/'.repeat(254)}`, { key: newKey(), caller, body: {} });
      expect(longest.status).toBe(201);
      expect(await paymentCount(caller)).toBe(1);
    });

    it("a body over the platform's limit: 413 problem+json from the demo, nothing runs, no key row", async () => {
      const caller = newCaller();
      // Just over Fastify's 1 MiB (and far over Express's 100 KB), chunked: the server reads up to
      // its limit before it answers, so the client has written everything by then (a body sent
      // with a larger Content-Length could meet the closing socket while still being written).
      const body = JSON.stringify({ ...validPayment, pad: '' });
      const answer = await send(`${demo.url}/payments`, {
        key: newKey(),
        caller,
        raw: body.replace('"pad":""', `"pad":"${'x'.repeat(1_048_576 + 64 - body.length)}"`),
        headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      });
      expect(answer.status).toBe(413);
      expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(answer.json).toMatchObject({ status: 413, title: 'Payload Too Large' });
      expect(await paymentCount(caller)).toBe(0);
      expect(await keyRows(caller)).toEqual([]);
    });

    it.each([
      ['a control character (0x01)', '\x01'],
      ['a NUL byte', '\x00'],
    ])(
      '%s in the key never reaches the module: Node answers 400, nothing runs, nothing stored',
      async (_case, byte) => {
        const caller = newCaller();
        const head =
          `POST /payments HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
          `Authorization: Bearer ${caller}\r\nIdempotency-Key: ${newKey()}${byte}\r\n`;
        expect(await sendRawBytes(demo.url, head, JSON.stringify(validPayment))).toBe(400);
        expect(await paymentCount(caller)).toBe(0);
        expect(await keyRows(caller)).toEqual([]);
      },
    );

    it('the same request without the odd byte is executed (the raw request itself is sound)', async () => {
      const caller = newCaller();
      const head =
        `POST /payments HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
        `Authorization: Bearer ${caller}\r\nIdempotency-Key: ${newKey()}\r\n`;
      expect(await sendRawBytes(demo.url, head, JSON.stringify(validPayment))).toBe(201);
      expect(await paymentCount(caller)).toBe(1);
    });
  });

  describe('problemDocumentation', () => {
    const documentation = 'https://developer.example.com/errors/idempotency';
    let lab: RunningApp;
    beforeAll(async () => {
      lab = await startLab({ problemDocumentation: documentation }, { controllers: [LabController] });
    });
    afterAll(() => lab.close());

    it('every problem links the documentation with rel="describedby"; without the option none does', async () => {
      const caller = newCaller();
      const missing = await send(`${lab.url}/lab/scoped`, { caller, body: validPayment });
      expect(missing.status).toBe(400);
      expect(missing.headers.link).toBe(`<${documentation}>; rel="describedby"`);
      const key = newKey();
      expect((await send(`${lab.url}/lab/scoped`, { key, caller, body: validPayment })).headers.link).toBeUndefined();
      const reused = await send(`${lab.url}/lab/scoped`, { key, caller, body: { ...validPayment, amount: 2 } });
      expect(reused.status).toBe(422);
      expect(reused.headers.link).toBe(`<${documentation}>; rel="describedby"`);
      const plain = await startLab({}, { controllers: [LabController] });
      try {
        const unlinked = await send(`${plain.url}/lab/scoped`, { caller, body: validPayment });
        expect(unlinked.status).toBe(400);
        expect(unlinked.headers.link).toBeUndefined();
      } finally {
        await plain.close();
      }
    });
  });
});
