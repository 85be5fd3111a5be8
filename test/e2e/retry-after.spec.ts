import { Controller, Headers, Post, UseGuards } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
import { IdempotencyEvents, Idempotent } from '../../src/index.js';
import { MAX_ESTIMATED_RETRY_AFTER_SECONDS, RetryAfterEstimate } from '../../src/http/retry-after.js';
import { appsOn, HTTP_PLATFORMS, type RunningApp } from '../support/apps.js';
import { entered, hold, release } from '../support/latch.js';
import { newCaller, newKey, send } from '../support/http.js';

/** A handler's work: `x-work-ms` milliseconds, or `held` until the test releases the key's latch. */
const work = (key: string, ms: string): Promise<void> => (ms === 'held' ? hold(key) : sleep(Number(ms)));

@Controller('retry-after')
@UseGuards(BearerAuthGuard)
class RunTimesController {
  @Post('estimated')
  @Idempotent()
  async estimated(@Headers('idempotency-key') key: string, @Headers('x-work-ms') ms: string): Promise<object> {
    await work(key, ms);
    return {};
  }

  @Post('floor')
  @Idempotent({ retryAfterSeconds: 5 })
  async floor(@Headers('idempotency-key') key: string, @Headers('x-work-ms') ms: string): Promise<object> {
    await work(key, ms);
    return {};
  }
}

describe.each(HTTP_PLATFORMS)('on %s', (platform) => {
  const { startLab } = appsOn(platform);
  let lab: RunningApp;
  beforeAll(async () => {
    lab = await startLab({}, { controllers: [RunTimesController] });
  });
  afterAll(() => lab.close());

  /** The Retry-After of a duplicate sent while the key's first request is held in its handler. */
  async function retryAfterWhileHeld(path: string): Promise<string | undefined> {
    const caller = newCaller();
    const key = newKey();
    const first = send(`${lab.url}${path}`, { key, caller, body: {}, headers: { 'x-work-ms': 'held' } });
    await entered(key);
    const duplicate = await send(`${lab.url}${path}`, { key, caller, body: {}, headers: { 'x-work-ms': '0' } });
    release(key);
    expect(duplicate.status).toBe(409);
    expect((await first).status).toBe(201);
    return duplicate.headers['retry-after'] as string | undefined;
  }

  describe("a transactional route's 409 Retry-After, from its recent run times", () => {
    it("is the route's retryAfterSeconds (1) before any run; after runs of 2.3 s, 3 (their 90th percentile, rounded up)", async () => {
      expect(await retryAfterWhileHeld('/retry-after/estimated')).toBe('1');
      const caller = newCaller();
      const runs = await Promise.all(
        Array.from({ length: 10 }, () =>
          send(`${lab.url}/retry-after/estimated`, {
            key: newKey(),
            caller,
            body: {},
            headers: { 'x-work-ms': '2300' },
          }),
        ),
      );
      expect(runs.map((run) => run.status)).toEqual(Array(10).fill(201));
      expect(await retryAfterWhileHeld('/retry-after/estimated')).toBe('3');
    }, 30_000);

    it("never goes under the route's retryAfterSeconds", async () => {
      await send(`${lab.url}/retry-after/floor`, {
        key: newKey(),
        caller: newCaller(),
        body: {},
        headers: { 'x-work-ms': '10' },
      });
      expect(await retryAfterWhileHeld('/retry-after/floor')).toBe('5');
    });
  });
});

describe('the Retry-After estimate', () => {
  const executed = (
    events: IdempotencyEvents,
    handler: string,
    durationMs: number,
    mode: 'transactional' | 'lease' = 'transactional',
  ) => events.emit({ type: 'executed', handler, mode, status: 201, durationMs });

  it(`is bounded by ${MAX_ESTIMATED_RETRY_AFTER_SECONDS} s, reads only the last 64 runs, and ignores lease mode`, () => {
    const events = new IdempotencyEvents();
    const estimate = new RetryAfterEstimate(events);
    for (let i = 0; i < 10; i++) executed(events, 'Slow.run', 600_000);
    expect(estimate.seconds('Slow.run', 1)).toBe(MAX_ESTIMATED_RETRY_AFTER_SECONDS);
    for (let i = 0; i < 64; i++) executed(events, 'Slow.run', 1_200);
    expect(estimate.seconds('Slow.run', 1)).toBe(2);
    executed(events, 'Leased.run', 9_000, 'lease');
    expect(estimate.seconds('Leased.run', 1)).toBe(1);
    estimate.onModuleDestroy();
  });
});
