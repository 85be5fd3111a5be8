import {
  type CallHandler,
  Controller,
  type ExecutionContext,
  Headers,
  Injectable,
  type NestInterceptor,
  Post,
  Req,
  UseGuards,
  UseInterceptors,
} from '@nestjs/common';
import { from, type Observable, retry, throwError } from 'rxjs';
import { IdempotencyTransaction, Idempotent } from '../../src/index.js';
import { type AuthenticatedRequest, BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
import { Payment } from '../../src/demo/payments/payment.entity.js';
import { keyRows, paymentCount, seedExpiredOutcome } from '../support/database.js';
import { appsOn, PLATFORMS_AND_HOSTS, type RunningApp } from '../support/apps.js';
import { LabController } from '../support/common-routes.controller.js';
import { entered, hold, release } from '../support/latch.js';
import { newCaller, newKey, send } from '../support/http.js';
import { FailurePolicyController } from './failure-policy.controller.js';

/** An app-wide interceptor that retries a failed handler once. */
@Injectable()
class RetryOnceInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(retry(1));
  }
}

/** `@Idempotent()` on the class and on the method: one pipeline, not two. */
@Controller('twice-marked')
@UseGuards(BearerAuthGuard)
@Idempotent()
class TwiceMarkedController {
  constructor(private readonly tx: IdempotencyTransaction) {}

  @Post()
  @Idempotent({ ttl: '1h' })
  async create(@Req() request: AuthenticatedRequest): Promise<Payment> {
    const payments = this.tx.getRepository(Payment);
    return payments.save(payments.create({ caller: request.user.id, amount: 3, currency: 'EUR' }));
  }
}

/**
 * Retries a 409 once, as a client would after its Retry-After, done by the server: the retry waits
 * on the latch `retry <key>`, which the test releases once the first request has answered.
 */
@Injectable()
class RetryConflictOnce implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const key = context.switchToHttp().getRequest<{ headers: Record<string, string> }>().headers['idempotency-key'];
    return next.handle().pipe(
      retry({
        count: 1,
        delay: (error: { getStatus?: () => number }) =>
          error.getStatus?.() === 409 ? from(hold(`retry ${key}`)) : throwError(() => error),
      }),
    );
  }
}

const conflictRuns = new Map<string, number>();

@Controller('retried-conflict')
@UseGuards(BearerAuthGuard)
@UseInterceptors(RetryConflictOnce)
class RetriedConflictController {
  /** Counts its runs per key and holds until the test releases the key's latch. */
  @Post()
  @Idempotent()
  async held(@Headers('idempotency-key') key: string): Promise<object> {
    conflictRuns.set(key, (conflictRuns.get(key) ?? 0) + 1);
    await hold(key);
    return { ran: true };
  }
}

describe.each(PLATFORMS_AND_HOSTS)('on %s, %s', (platform, host) => {
  const { startDemo, startLab } = appsOn(platform, host);

  describe('interceptors around the module', () => {
    let lab: RunningApp;
    beforeAll(async () => {
      lab = await startLab(
        {},
        {
          controllers: [FailurePolicyController, TwiceMarkedController, RetriedConflictController],
          configure: (app) => app.useGlobalInterceptors(new RetryOnceInterceptor()),
        },
      );
    });
    afterAll(() => lab.close());

    it("an outer interceptor retrying a failed handler: the second run is refused (500 handler-run-twice), nothing kept, and so for the client's retry", async () => {
      const caller = newCaller();
      const key = newKey();
      const failed = await send(`${lab.url}/lab/fail-after-write`, { key, caller, body: {} });
      expect(failed.status).toBe(500);
      expect(failed.json.type).toBe('urn:nestjs-pg-idempotency:handler-run-twice');
      expect(await paymentCount(caller)).toBe(0);
      expect(await keyRows(caller)).toEqual([]);
      const again = await send(`${lab.url}/lab/fail-after-write`, { key, caller, body: {} });
      expect(again.status).toBe(500);
      expect(await paymentCount(caller)).toBe(0);
    });

    it('an outer retry of a duplicate answered 409 (the handler never ran for it) runs the pipeline again: the replay', async () => {
      const caller = newCaller();
      const key = newKey();
      const first = send(`${lab.url}/retried-conflict`, { key, caller, body: {} });
      await entered(key);
      const duplicate = send(`${lab.url}/retried-conflict`, { key, caller, body: {} });
      // The duplicate got its 409 (the first holds the key) and its retry waits.
      await entered(`retry ${key}`);
      release(key);
      const firstStatus = (await first).status;
      release(`retry ${key}`);
      const retried = await duplicate;
      expect({
        first: firstStatus,
        duplicate: retried.status,
        replayed: retried.headers['idempotent-replayed'],
        runs: conflictRuns.get(key),
      }).toEqual({
        first: 201,
        duplicate: 201,
        replayed: 'true',
        runs: 1,
      });
    });

    it('@Idempotent() on the class and on the method runs the handler once, with one key row, and replays', async () => {
      const caller = newCaller();
      const key = newKey();
      const first = await send(`${lab.url}/twice-marked`, { key, caller, body: {} });
      const replay = await send(`${lab.url}/twice-marked`, { key, caller, body: {} });
      expect([first.status, replay.status]).toEqual([201, 201]);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(await paymentCount(caller)).toBe(1);
      expect(await keyRows(caller)).toEqual([{ key, endpoint: 'POST /twice-marked', state: 'completed', status: 201 }]);
    });
  });

  describe('failure policy', () => {
    let lab: RunningApp;
    beforeAll(async () => (lab = await startLab({}, { controllers: [LabController, FailurePolicyController] })));
    afterAll(async () => {
      await lab.close();
    });

    it('a handler that throws after writing: its rows and the key roll back, the answer is a 500, the retry runs', async () => {
      const caller = newCaller();
      const key = newKey();
      const first = await send(`${lab.url}/lab/flaky`, { key, caller, body: {} });
      expect(first.status).toBe(500);
      expect(await paymentCount(caller)).toBe(0);
      expect(await keyRows(caller)).toEqual([]);

      const retry = await send(`${lab.url}/lab/flaky`, { key, caller, body: {} });
      expect(retry.status).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
      expect(retry.json.attempt).toBe(2);
      expect(await paymentCount(caller)).toBe(1);
      const replay = await send(`${lab.url}/lab/flaky`, { key, caller, body: {} });
      expect(replay.body.equals(retry.body)).toBe(true);
    });

    it('a handler that sends 201 itself and then fails: the 201 is withdrawn (its write rolled back), a 500 problem goes out instead, nothing is stored, the retry runs', async () => {
      const caller = newCaller();
      const key = newKey();
      const first = await send(`${lab.url}/lab/self-sent-then-fail`, { key, caller, body: {} });
      expect(first.status).toBe(500);
      expect(first.headers['content-type']).toContain('application/problem+json');
      expect(first.json).toMatchObject({ type: 'urn:nestjs-pg-idempotency:handler-failed-after-answer', status: 500 });
      expect(Number(first.headers['content-length'])).toBe(first.body.length);
      expect(await paymentCount(caller)).toBe(0);
      expect(await keyRows(caller)).toEqual([]);
      const retry = await send(`${lab.url}/lab/self-sent-then-fail`, { key, caller, body: {} });
      expect(retry.status).toBe(500);
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
    });

    it("an upstream's 4xx thrown as a plain error (an HTTP client's) is the server's failure: 500, not stored, the retry runs", async () => {
      const caller = newCaller();
      const key = newKey();
      for (let i = 0; i < 2; i++) {
        const answer = await send(`${lab.url}/lab/upstream-refused`, { key, caller, body: {} });
        expect(answer.status).toBe(500);
        expect(answer.json.detail).not.toContain('status code 401');
        expect(answer.headers['idempotent-replayed']).toBeUndefined();
      }
      expect(await paymentCount(caller)).toBe(0);
      expect(await keyRows(caller)).toEqual([]);
    });

    it('a thrown non-HTTP error is never stored: every retry runs again', async () => {
      const caller = newCaller();
      const key = newKey();
      for (let i = 0; i < 3; i++) {
        const answer = await send(`${lab.url}/lab/fail-after-write`, { key, caller, body: {} });
        expect(answer.status).toBe(500);
        expect(answer.headers['idempotent-replayed']).toBeUndefined();
      }
      expect(await paymentCount(caller)).toBe(0);
      expect(await keyRows(caller)).toEqual([]);
    });

    it('a deterministic 4xx thrown after a write: the write is undone, the 4xx stored and replayed', async () => {
      const caller = newCaller();
      const key = newKey();
      const first = await send(`${lab.url}/lab/reject-after-write`, { key, caller, body: {} });
      expect(first.status).toBe(422);
      const again = await send(`${lab.url}/lab/reject-after-write`, { key, caller, body: {} });
      expect(again.status).toBe(422);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body.equals(first.body)).toBe(true);
      expect(await paymentCount(caller)).toBe(0);
      expect(await keyRows(caller)).toEqual([
        { key, endpoint: 'POST /lab/reject-after-write', state: 'completed', status: 422 },
      ]);
    });

    it.each([
      ['after a statement of the handler failed (the transaction aborted), a thrown 400', 'sql-error-then-400', 400],
      ['a 422 thrown inside a nested manager.transaction()', 'nested-reject', 422],
    ])('%s: every write rolls back, the answer is recorded and replayed', async (_case, path, status) => {
      const caller = newCaller();
      const key = newKey();
      const first = await send(`${lab.url}/lab/${path}`, { key, caller, body: {} });
      const again = await send(`${lab.url}/lab/${path}`, { key, caller, body: {} });
      expect([first.status, again.status]).toEqual([status, status]);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body.equals(first.body)).toBe(true);
      expect(await paymentCount(caller)).toBe(0);
      expect(await keyRows(caller)).toEqual([expect.objectContaining({ key, state: 'completed', status })]);
    });

    it('a thrown 422 on a key whose expired row is taken over: the old row is replaced by the 422, the write rolls back', async () => {
      const caller = newCaller();
      const key = newKey();
      await seedExpiredOutcome(key, caller, 'POST /lab/reject-after-write');
      const first = await send(`${lab.url}/lab/reject-after-write`, { key, caller, body: {} });
      const again = await send(`${lab.url}/lab/reject-after-write`, { key, caller, body: {} });
      expect([first.status, again.status]).toEqual([422, 422]);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(await paymentCount(caller)).toBe(0);
      expect(await keyRows(caller)).toEqual([expect.objectContaining({ key, state: 'completed', status: 422 })]);
    });

    it.each([500, 502, 503, 408, 409, 425, 429])(
      'a %i is not stored: the business write rolls back and the key is free',
      async (code) => {
        const caller = newCaller();
        const key = newKey();
        const first = await send(`${lab.url}/lab/status/${code}`, { key, caller, body: {} });
        expect(first.status).toBe(code);
        const again = await send(`${lab.url}/lab/status/${code}`, { key, caller, body: {} });
        expect(again.headers['idempotent-replayed']).toBeUndefined();
        expect(await paymentCount(caller)).toBe(0);
        expect(await keyRows(caller)).toEqual([]);
      },
    );

    it.each([400, 403, 404, 410])('a %i is stored and replayed', async (code) => {
      const caller = newCaller();
      const key = newKey();
      const first = await send(`${lab.url}/lab/status/${code}`, { key, caller, body: {} });
      const again = await send(`${lab.url}/lab/status/${code}`, { key, caller, body: {} });
      expect([first.status, again.status]).toEqual([code, code]);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(await paymentCount(caller)).toBe(0);
    });

    it('a StreamableFile is refused with a problem and nothing is kept', async () => {
      const caller = newCaller();
      const answer = await send(`${lab.url}/lab/file`, { key: newKey(), caller, body: {} });
      expect(answer.status).toBe(500);
      expect(answer.json.type).toBe('urn:nestjs-pg-idempotency:response-not-replayable');
      expect(await paymentCount(caller)).toBe(0);
      expect(await keyRows(caller)).toEqual([]);
    });

    it('a route can override the policy (@Idempotent({ storeResponse }))', async () => {
      const caller = newCaller();
      const key = newKey();
      const first = await send(`${lab.url}/lab/status-below-400-stored/404`, { key, caller, body: {} });
      const again = await send(`${lab.url}/lab/status-below-400-stored/404`, { key, caller, body: {} });
      expect([first.status, again.status]).toEqual([404, 404]);
      expect(again.headers['idempotent-replayed']).toBeUndefined();
      expect(await keyRows(caller)).toEqual([]);
      // The same 404 on a route without its own policy is stored and replayed.
      const otherKey = newKey();
      await send(`${lab.url}/lab/status/404`, { key: otherKey, caller, body: {} });
      const replayed = await send(`${lab.url}/lab/status/404`, { key: otherKey, caller, body: {} });
      expect(replayed.headers['idempotent-replayed']).toBe('true');
    });

    it('a module can override the policy (storeResponse)', async () => {
      const app = await startLab({ storeResponse: (status) => status < 400 }, { controllers: [LabController] });
      try {
        const caller = newCaller();
        const key = newKey();
        await send(`${app.url}/lab/status/404`, { key, caller, body: {} });
        const again = await send(`${app.url}/lab/status/404`, { key, caller, body: {} });
        expect(again.headers['idempotent-replayed']).toBeUndefined();
        expect(await keyRows(caller)).toEqual([]);
      } finally {
        await app.close();
      }
    });
  });

  describe('validation errors (demo API)', () => {
    it('a validation 400 is a problem, stored and replayed, and writes nothing', async () => {
      const demo = await startDemo();
      try {
        const caller = newCaller();
        const key = newKey();
        const body = { amount: -5, currency: 'euro' };
        const first = await send(`${demo.url}/payments`, { key, caller, body });
        expect(first.status).toBe(400);
        expect(first.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(first.json.errors).toEqual(expect.arrayContaining([expect.stringContaining('currency')]));
        const again = await send(`${demo.url}/payments`, { key, caller, body });
        expect(again.headers['idempotent-replayed']).toBe('true');
        expect(again.body.equals(first.body)).toBe(true);
        expect(await paymentCount(caller)).toBe(0);
      } finally {
        await demo.close();
      }
    });
  });
});
