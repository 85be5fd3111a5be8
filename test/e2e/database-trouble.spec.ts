import { RequestTimeoutException } from '@nestjs/common';
import { catchError, throwError, timeout, TimeoutError } from 'rxjs';
import { DataSource } from 'typeorm';
import { handlerBackend, keyLockHolders, keyRows, paymentCount, sql, until } from '../support/database.js';
import { appsOn, databaseUrl, HTTP_PLATFORMS, type RunningApp } from '../support/apps.js';
import { LabController } from '../support/common-routes.controller.js';
import { newCaller, newKey, send } from '../support/http.js';
import { entered, release, waiting } from '../support/latch.js';
import { DatabaseTroubleController, lockPairLatch } from './database-trouble.controller.js';

describe.each(HTTP_PLATFORMS)('on %s', (platform) => {
  const { startLab } = appsOn(platform);

  describe('database trouble', () => {
    let lab: RunningApp;
    beforeAll(async () => (lab = await startLab({}, { controllers: [LabController, DatabaseTroubleController] })));
    afterAll(() => lab.close());

    it('the connection lost mid-request: 503 store-unavailable, the write undone, the key free', async () => {
      const caller = newCaller();
      const key = newKey();
      // The handler is held after its write: the connection is cut while it still works.
      const answer = send(`${lab.url}/lab/held-write`, { key, caller, body: {} });
      await sql('SELECT pg_terminate_backend($1)', [await handlerBackend()]);
      release(caller);
      const failed = await answer;
      expect(failed.status).toBe(503);
      expect(failed.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(failed.json).toMatchObject({ type: 'urn:nestjs-pg-idempotency:store-unavailable', status: 503 });
      expect(await paymentCount(caller)).toBe(0);
      expect(await keyRows(caller)).toEqual([]);

      const retry = await send(`${lab.url}/lab/held-write`, { key, caller, body: {} });
      expect(retry.status).toBe(201);
      expect(await paymentCount(caller)).toBe(1);
    });

    it('two requests that deadlock: one 201, the other a 503 with Retry-After, its write undone, its key free; its retry runs once', async () => {
      const [a, b] = [String(Math.floor(Math.random() * 1e12)), String(Math.floor(Math.random() * 1e12))];
      const [callerA, callerB] = [newCaller(), newCaller()];
      const [keyA, keyB] = [newKey(), newKey()];
      const sent = [
        send(`${lab.url}/lab/lock-pair`, {
          key: keyA,
          caller: callerA,
          body: {},
          headers: { 'x-first': a, 'x-second': b },
        }),
        send(`${lab.url}/lab/lock-pair`, {
          key: keyB,
          caller: callerB,
          body: {},
          headers: { 'x-first': b, 'x-second': a },
        }),
      ];
      // Both hold their first lock: each now asks for the other's.
      await entered(lockPairLatch(a, b), 2);
      release(lockPairLatch(a, b));
      const answers = await Promise.all(sent);
      expect(answers.map((answer) => answer.status).sort()).toEqual([201, 503]);
      const lost = answers.findIndex((answer) => answer.status === 503);
      expect(answers[lost].json).toMatchObject({ type: 'urn:nestjs-pg-idempotency:store-unavailable', status: 503 });
      expect(Number(answers[lost].headers['retry-after'])).toBeGreaterThan(0);
      const [caller, key] = lost === 0 ? [callerA, keyA] : [callerB, keyB];
      expect(await paymentCount(caller)).toBe(0);
      expect(await keyRows(caller)).toEqual([]);
      const headers = lost === 0 ? { 'x-first': a, 'x-second': b } : { 'x-first': b, 'x-second': a };
      expect((await send(`${lab.url}/lab/lock-pair`, { key, caller, body: {}, headers })).status).toBe(201);
      expect(await paymentCount(caller)).toBe(1);
    });

    it.each([
      ['transactional', 'held-write'],
      ['lease', 'lease-held-write'],
    ])(
      '%s mode, a client that disconnects mid-request: the outcome is still recorded, the retry gets it',
      async (_mode, route) => {
        const caller = newCaller();
        const key = newKey();
        const controller = new AbortController();
        const aborted = fetch(`${lab.url}/lab/${route}`, {
          method: 'POST',
          headers: { 'idempotency-key': key, authorization: `Bearer ${caller}`, 'content-type': 'application/json' },
          body: '{}',
          signal: controller.signal,
        }).catch((error: Error) => error);
        // The handler has written (uncommitted in transactional mode) and is held.
        await entered(caller);
        controller.abort();
        expect(await aborted).toHaveProperty('name', 'AbortError');
        const during = await send(`${lab.url}/lab/${route}`, { key, caller, body: {} });
        expect(during.status).toBe(409);
        release(caller);
        await until(async () => (await keyRows(caller)).some((row) => row.state === 'completed'));
        expect(await keyRows(caller)).toMatchObject([{ key, state: 'completed', status: 201 }]);
        const retry = await send(`${lab.url}/lab/${route}`, { key, caller, body: {} });
        expect(retry.status).toBe(201);
        expect(retry.headers['idempotent-replayed']).toBe('true');
        expect(await paymentCount(caller)).toBe(1);
      },
    );

    it('an answer the handler sends itself (@Res({ passthrough: true })) before it returns is recorded with its writes, and replayed', async () => {
      const caller = newCaller();
      const key = newKey();
      const first = await send(`${lab.url}/lab/self-sent`, { key, caller, body: {} });
      expect(first.status).toBe(201);
      expect(await paymentCount(caller)).toBe(1);
      expect(await keyRows(caller)).toMatchObject([{ key, state: 'completed', status: 201 }]);
      const again = await send(`${lab.url}/lab/self-sent`, { key, caller, body: {} });
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body.equals(first.body)).toBe(true);
      expect(await paymentCount(caller)).toBe(1);
    });

    it('a handler that sends its answer itself and awaits its end() callback: answered, and its later write is recorded with it', async () => {
      const caller = newCaller();
      const key = newKey();
      const first = await send(`${lab.url}/lab/self-sent-awaited`, { key, caller, body: {} });
      expect(first.status).toBe(201);
      expect(await paymentCount(caller)).toBe(2);
      expect(await keyRows(caller)).toMatchObject([{ key, state: 'completed', status: 201 }]);
      const again = await send(`${lab.url}/lab/self-sent-awaited`, { key, caller, body: {} });
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body.equals(first.body)).toBe(true);
      expect(await paymentCount(caller)).toBe(2);
    });
  });

  describe('an answer sent before the handler finished (an outer timeout interceptor)', () => {
    let lab: RunningApp;
    beforeAll(
      async () =>
        (lab = await startLab(
          {},
          {
            controllers: [LabController, DatabaseTroubleController],
            configure: (app) =>
              app.useGlobalInterceptors({
                intercept: (_context, next) =>
                  next.handle().pipe(
                    timeout(200),
                    catchError((error: unknown) =>
                      throwError(() => (error instanceof TimeoutError ? new RequestTimeoutException() : error)),
                    ),
                  ),
              }),
          },
        )),
    );
    afterAll(() => lab.close());

    it.each([
      ['transactional', 'held-write', 0],
      ['lease', 'lease-held-write', 1],
    ])(
      '%s mode: the 408 leaves at once, the key stays held until the handler ends, then is free',
      async (_mode, route, kept) => {
        const caller = newCaller();
        const key = newKey();
        const first = await send(`${lab.url}/lab/${route}`, { key, caller, body: {} });
        expect(first.status).toBe(408);
        // The 408 left while the handler still sits in its hold, not once the handler ended.
        expect(waiting(caller)).toBe(1);
        const during = await send(`${lab.url}/lab/${route}`, { key, caller, body: {} });
        expect(during.status).toBe(409);
        // The handler ends once released; the key is then released (408 is not stored): in
        // transactional mode with the handler's write rolled back, in lease mode after it.
        release(caller);
        await until(
          async () =>
            (await keyLockHolders(key, caller, `POST /lab/${route}`)) === 0 && (await keyRows(caller)).length === 0,
          'the key free',
        );
        expect(await paymentCount(caller)).toBe(kept);
      },
    );
  });

  describe('the database unreachable when reserving', () => {
    it('answers 503 store-unavailable and runs nothing', async () => {
      const dataSource = new DataSource({ type: 'postgres', url: databaseUrl() });
      await dataSource.initialize();
      const lab = await startLab({ dataSource }, { controllers: [LabController] });
      try {
        await dataSource.destroy();
        const caller = newCaller();
        const answer = await send(`${lab.url}/lab/scoped`, { key: newKey(), caller, body: {} });
        expect(answer.status).toBe(503);
        expect(answer.json).toMatchObject({ type: 'urn:nestjs-pg-idempotency:store-unavailable', status: 503 });
        expect(await paymentCount(caller)).toBe(0);
        expect(await keyRows(caller)).toEqual([]);
      } finally {
        await lab.close();
      }
    });
  });
});
