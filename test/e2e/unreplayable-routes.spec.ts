import { IdempotencyConfigurationError, UnreplayableRouteError } from '../../src/index.js';
import { keyRows, paymentCount } from '../support/database.js';
import { appsOn, bootstrapFailure, HTTP_PLATFORMS, type RunningApp } from '../support/apps.js';
import { newCaller, newKey, send } from '../support/http.js';
import { ReplayFidelityController } from './replay-fidelity.controller.js';
import {
  IdempotentClassWithSseController,
  NextController,
  NonIdempotentController,
  ObservableController,
  RawResponseController,
  SseController,
} from './unreplayable-routes.controller.js';

describe.each(HTTP_PLATFORMS)('on %s', (platform) => {
  const { startLab } = appsOn(platform);

  describe('routes whose responses cannot be replayed fail the bootstrap', () => {
    it.each([
      ['@Res() without passthrough', RawResponseController, 'RawResponseController.pay', '@Res({ passthrough: true })'],
      ['@Next()', NextController, 'NextController.pay', '@Next()'],
      ['@Sse() with @Idempotent() on the method', SseController, 'SseController.events', '@Sse()'],
      [
        '@Sse() in an @Idempotent() class',
        IdempotentClassWithSseController,
        'IdempotentClassWithSseController.events',
        '@Sse()',
      ],
    ])(
      '%s: app.listen() rejects with an UnreplayableRouteError naming the route and the fix',
      async (_case, controller, route, fix) => {
        const failure = await bootstrapFailure(startLab({}, { controllers: [controller] }));
        expect(failure).toBeInstanceOf(UnreplayableRouteError);
        expect(failure).toBeInstanceOf(IdempotencyConfigurationError);
        expect((failure as Error).name).toBe('UnreplayableRouteError');
        expect((failure as Error).message).toContain(route);
        expect((failure as Error).message).toContain(fix);
        expect((failure as UnreplayableRouteError).routes).toHaveLength(1);
      },
    );

    it('lists every such route in one error', async () => {
      const failure = await bootstrapFailure(startLab({}, { controllers: [RawResponseController, SseController] }));
      expect(failure).toBeInstanceOf(UnreplayableRouteError);
      expect((failure as UnreplayableRouteError).routes.map((line) => line.split(':')[0]).sort()).toEqual([
        'RawResponseController.pay',
        'SseController.events',
      ]);
    });

    it('@Res() and @Sse() on routes without @Idempotent(), and @Res({ passthrough: true }) on one with it, start fine', async () => {
      // POST /lab/headers (replay-fidelity's) takes @Res({ passthrough: true }).
      const lab = await startLab({}, { controllers: [NonIdempotentController, ReplayFidelityController] });
      try {
        const raw = await send(`${lab.url}/replayable-neighbours/raw`, { method: 'GET' });
        expect([raw.status, raw.text]).toEqual([200, 'raw']);
        const passthrough = await send(`${lab.url}/lab/headers`, { key: newKey(), caller: newCaller(), body: {} });
        expect(passthrough.status).toBe(201);
      } finally {
        await lab.close();
      }
    });
  });

  describe('a handler that returns an Observable', () => {
    let lab: RunningApp;
    beforeAll(async () => (lab = await startLab({}, { controllers: [ObservableController] })));
    afterAll(() => lab.close());

    it('of one value: stored and replayed like any value', async () => {
      const caller = newCaller();
      const key = newKey();
      const first = await send(`${lab.url}/lab/observable`, { key, caller, body: { count: 1 } });
      const again = await send(`${lab.url}/lab/observable`, { key, caller, body: { count: 1 } });
      expect(first.status).toBe(201);
      expect(first.json).toMatchObject({ n: 0 });
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body.equals(first.body)).toBe(true);
      expect(await paymentCount(caller)).toBe(1);
    });

    it.each([
      ['three values', 3],
      ['values without end', 0],
    ])(
      'of %s: refused with a 500 response-not-replayable problem, nothing kept, the key free',
      async (_case, count) => {
        const caller = newCaller();
        const key = newKey();
        const answer = await send(`${lab.url}/lab/observable`, { key, caller, body: { count } });
        expect(answer.status).toBe(500);
        expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(answer.json).toMatchObject({ type: 'urn:nestjs-pg-idempotency:response-not-replayable', status: 500 });
        expect(await paymentCount(caller)).toBe(0);
        expect(await keyRows(caller)).toEqual([]);
        const retry = await send(`${lab.url}/lab/observable`, { key, caller, body: { count } });
        expect(retry.status).toBe(500);
        expect(retry.headers['idempotent-replayed']).toBeUndefined();
      },
    );
  });
});
