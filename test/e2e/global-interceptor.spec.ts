import { APP_INTERCEPTOR } from '@nestjs/core';
import { IdempotencyInterceptor } from '../../src/index.js';
import { keyRows, paymentCount } from '../support/database.js';
import { appsOn, HTTP_PLATFORMS, type RunningApp } from '../support/apps.js';
import { newCaller, newKey, send, validPayment } from '../support/http.js';
import { PlainController } from './global-interceptor.controller.js';

describe.each(HTTP_PLATFORMS)('on %s', (platform) => {
  const { startLab } = appsOn(platform);

  describe('IdempotencyInterceptor registered globally (APP_INTERCEPTOR)', () => {
    let lab: RunningApp;
    beforeAll(async () => {
      lab = await startLab(
        {},
        { controllers: [PlainController], providers: [{ provide: APP_INTERCEPTOR, useClass: IdempotencyInterceptor }] },
      );
    });
    afterAll(() => lab.close());

    it('lets routes without @Idempotent() through without a key, and stores nothing for them', async () => {
      const caller = newCaller();
      const list = await send(`${lab.url}/plain`, { method: 'GET', caller });
      expect(list.status).toBe(200);
      expect(list.json).toEqual({ items: [] });
      const echo = await send(`${lab.url}/plain`, { caller, body: { note: 'hello' } });
      expect(echo.status).toBe(201);
      expect(echo.json).toEqual({ note: 'hello' });
      const keyed = await send(`${lab.url}/plain`, { caller, key: newKey(), body: { note: 'hello' } });
      expect(keyed.status).toBe(201);
      expect(keyed.headers['idempotent-replayed']).toBeUndefined();
      expect(await keyRows(caller)).toEqual([]);
    });

    it('still makes @Idempotent() routes exactly-once: a key required, one execution, the replay', async () => {
      const caller = newCaller();
      const missing = await send(`${lab.url}/payments`, { caller, body: validPayment });
      expect(missing.status).toBe(400);
      const key = newKey();
      const first = await send(`${lab.url}/payments`, { key, caller, body: validPayment });
      expect(first.status).toBe(201);
      const retry = await send(`${lab.url}/payments`, { key, caller, body: validPayment });
      expect(retry.status).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.body.equals(first.body)).toBe(true);
      expect(await paymentCount(caller)).toBe(1);
      expect(await keyRows(caller)).toEqual([{ key, endpoint: 'POST /payments', state: 'completed', status: 201 }]);
    });
  });
});
