import { newCaller, newKey, send, validPayment } from '../support/http.js';
import { keyRows, paymentCount, sql } from '../support/database.js';
import { appsOn, PLATFORMS_AND_DEMO_HOSTS, type RunningApp } from '../support/apps.js';

// Every host the demo runs on: TypeORM (both accesses), cls on TypeORM, and Prisma (plain and through cls) on the node-postgres pool host.
describe.each(PLATFORMS_AND_DEMO_HOSTS)('on %s, %s', (platform, host) => {
  const { startDemo } = appsOn(platform, host);

  describe('first request executes, retries replay it (demo API)', () => {
    let demo: RunningApp;
    beforeAll(async () => (demo = await startDemo()));
    afterAll(async () => {
      await demo.close();
    });

    it('replays the same status, byte-identical body and allow-listed headers, with Idempotent-Replayed', async () => {
      const caller = newCaller();
      const key = newKey();
      const first = await send(`${demo.url}/payments`, { key, caller, body: validPayment });
      expect(first.status).toBe(201);
      expect(first.json).toMatchObject({ amount: 1250, currency: 'EUR', id: expect.any(String) });
      expect(first.headers['idempotent-replayed']).toBeUndefined();

      for (let retry = 0; retry < 3; retry++) {
        const again = await send(`${demo.url}/payments`, { key, caller, body: validPayment });
        expect(again.status).toBe(201);
        expect(again.body.equals(first.body)).toBe(true);
        expect(again.headers['content-type']).toBe(first.headers['content-type']);
        expect(again.headers.etag).toBe(first.headers.etag);
        expect(again.headers['idempotent-replayed']).toBe('true');
      }
      expect(await paymentCount(caller)).toBe(1);
      expect(await keyRows(caller)).toEqual([{ key, endpoint: 'POST /payments', state: 'completed', status: 201 }]);
    });

    it('stores the exact bytes the client received', async () => {
      const caller = newCaller();
      const key = newKey();
      const first = await send(`${demo.url}/payments`, { key, caller, body: validPayment });
      const [row] = await sql('SELECT response_body FROM idempotency_keys WHERE caller = $1', [caller]);
      expect(Buffer.compare(row.response_body, first.body)).toBe(0);
    });

    it('treats the quoted (RFC 8941) and bare forms of a key as the same key', async () => {
      const caller = newCaller();
      const key = newKey();
      const first = await send(`${demo.url}/payments`, { key: `"${key}"`, caller, body: validPayment });
      const bare = await send(`${demo.url}/payments`, { key, caller, body: validPayment });
      expect(first.status).toBe(201);
      expect(bare.headers['idempotent-replayed']).toBe('true');
      expect(bare.body.equals(first.body)).toBe(true);
      expect(await paymentCount(caller)).toBe(1);
    });

    it('replays when only the JSON key order differs', async () => {
      const caller = newCaller();
      const key = newKey();
      const first = await send(`${demo.url}/payments`, { key, caller, raw: '{"amount":1250,"currency":"EUR"}' });
      const reordered = await send(`${demo.url}/payments`, {
        key,
        caller,
        raw: '{ "currency": "EUR", "amount": 1250 }',
      });
      expect(reordered.status).toBe(201);
      expect(reordered.headers['idempotent-replayed']).toBe('true');
      expect(reordered.body.equals(first.body)).toBe(true);
      expect(await paymentCount(caller)).toBe(1);
    });

    it('answers 422 key-reused, executing nothing, when the same key comes with another payload', async () => {
      const caller = newCaller();
      const key = newKey();
      await send(`${demo.url}/payments`, { key, caller, body: validPayment });
      const other = await send(`${demo.url}/payments`, { key, caller, body: { amount: 9999, currency: 'EUR' } });
      expect(other.status).toBe(422);
      expect(other.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(other.json).toMatchObject({
        type: 'urn:nestjs-pg-idempotency:key-reused',
        status: 422,
        title: expect.any(String),
        detail: expect.any(String),
      });
      expect(await paymentCount(caller)).toBe(1);
    });

    it("lists the caller's payments with GET /payments", async () => {
      const caller = newCaller();
      const created = await send(`${demo.url}/payments`, { key: newKey(), caller, body: validPayment });
      const list = await send(`${demo.url}/payments`, { method: 'GET', caller });
      expect(list.status).toBe(200);
      expect(list.json).toEqual([created.json]);
      expect((await send(`${demo.url}/payments`, { method: 'GET', caller: null })).status).toBe(401);
    });
  });
});
