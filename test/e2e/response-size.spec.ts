import { Controller, Post } from '@nestjs/common';
import { Idempotent } from '../../src/index.js';
import { keyRows, paymentCount, sql } from '../support/database.js';
import { appsOn, HTTP_PLATFORMS, type RunningApp } from '../support/apps.js';
import { newCaller, newKey, send } from '../support/http.js';
import { LabController } from '../support/common-routes.controller.js';
import { ResponseSizeController, SizeController } from './response-size.controller.js';

@Controller('bad-option')
class BadOptionController {
  @Post()
  @Idempotent({ maxResponseBytes: 0 })
  pay(): object {
    return {};
  }
}

describe.each(HTTP_PLATFORMS)('on %s', (platform) => {
  const { startLab } = appsOn(platform);

  describe('maxResponseBytes', () => {
    let lab: RunningApp;
    beforeAll(async () => (lab = await startLab({}, { controllers: [ResponseSizeController] })));
    afterAll(() => lab.close());

    it('a response within the route limit (4 KiB) is stored and replayed byte for byte', async () => {
      const caller = newCaller();
      const key = newKey();
      const first = await send(`${lab.url}/lab/large`, { key, caller, body: { size: 4000 } });
      const again = await send(`${lab.url}/lab/large`, { key, caller, body: { size: 4000 } });
      expect(first.status).toBe(201);
      expect(first.body.length).toBeLessThanOrEqual(4096);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body.equals(first.body)).toBe(true);
      expect(await paymentCount(caller)).toBe(1);
    });

    it('over the route limit: a 500 response-too-large problem, the write rolled back, the key free', async () => {
      const caller = newCaller();
      const key = newKey();
      const answer = await send(`${lab.url}/lab/large`, { key, caller, body: { size: 5000 } });
      expect(answer.status).toBe(500);
      expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(answer.json).toMatchObject({ type: 'urn:nestjs-pg-idempotency:response-too-large', status: 500 });
      expect(answer.json.detail).toMatch(/larger than maxResponseBytes \(4096\)/);
      expect(answer.text).not.toContain('xxxx');
      expect(await paymentCount(caller)).toBe(0);
      expect(await keyRows(caller)).toEqual([]);
      // Nothing was kept: the retry runs again rather than replaying.
      const retry = await send(`${lab.url}/lab/large`, { key, caller, body: { size: 5000 } });
      expect(retry.status).toBe(500);
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
      expect(await paymentCount(caller)).toBe(0);
    });

    it('the module default is 1 MiB: 1 000 000 bytes are stored, 1 100 000 refused', async () => {
      const caller = newCaller();
      const [fits, key] = [newKey(), newKey()];
      const first = await send(`${lab.url}/lab/large-default`, { key: fits, caller, body: { size: 1_000_000 } });
      const again = await send(`${lab.url}/lab/large-default`, { key: fits, caller, body: { size: 1_000_000 } });
      expect(first.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body.equals(first.body)).toBe(true);
      const [row] = await sql('SELECT length(response_body) AS n FROM idempotency_keys WHERE caller = $1', [caller]);
      expect(row.n).toBe(first.body.length);

      const tooLarge = await send(`${lab.url}/lab/large-default`, { key, caller, body: { size: 1_100_000 } });
      expect(tooLarge.status).toBe(500);
      expect(tooLarge.json.type).toBe('urn:nestjs-pg-idempotency:response-too-large');
      expect(await paymentCount(caller)).toBe(1);
    });
  });

  it('maxResponseBytes set on the module applies to every stored outcome', async () => {
    const lab = await startLab({ maxResponseBytes: 16 }, { controllers: [LabController] });
    try {
      const caller = newCaller();
      const answer = await send(`${lab.url}/lab/scoped`, { key: newKey(), caller, body: {} });
      expect(answer.status).toBe(500);
      expect(answer.json.type).toBe('urn:nestjs-pg-idempotency:response-too-large');
      expect(await paymentCount(caller)).toBe(0);
      // An outcome the failure policy does not store is sent as it is, whatever its size.
      const unavailable = await send(`${lab.url}/lab/status/503`, { key: newKey(), caller, body: {} });
      expect(unavailable.status).toBe(503);
      expect(unavailable.body.length).toBeGreaterThan(16);
    } finally {
      await lab.close();
    }
  });

  it('lease mode: a response over the limit is a 500 problem and releases the key, so the retry runs again', async () => {
    const lab = await startLab({}, { controllers: [SizeController] });
    try {
      const caller = newCaller();
      const key = newKey();
      const first = await send(`${lab.url}/size/lease`, { key, caller, body: {} });
      expect(first.status).toBe(500);
      expect(first.json.type).toBe('urn:nestjs-pg-idempotency:response-too-large');
      expect(await keyRows(caller)).toEqual([]);
      const retry = await send(`${lab.url}/size/lease`, { key, caller, body: {} });
      expect(retry.status).toBe(500);
      expect(retry.json.detail).toMatch(/larger than maxResponseBytes \(64\)/);
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
    } finally {
      await lab.close();
    }
  });

  it('an invalid route option fails the bootstrap, not the first request', async () => {
    await expect(startLab({}, { controllers: [BadOptionController] })).rejects.toThrow(
      /option "maxResponseBytes" must be a positive integer, got 0/,
    );
  });
});
