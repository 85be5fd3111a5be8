import { Logger } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { IdempotencyEvents } from '../../src/index.js';

describe('IdempotencyEvents', () => {
  afterEach(() => jest.restoreAllMocks());

  it('logs a listener that throws, or an async one that rejects, and goes on with the next listeners', async () => {
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const events = new IdempotencyEvents();
    const heard: string[] = [];
    events.subscribe(() => {
      throw new Error('metrics backend down (sync)');
    });
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- a listener's rejection is what the test is about
    events.subscribe(async () => {
      throw new Error('metrics backend down (async)');
    });
    events.subscribe((event) => void heard.push(event.type));
    events.emit({ type: 'swept', deleted: 1, durationMs: 1 });
    await sleep(10); // an unhandled rejection would fail this test here
    expect(heard).toEqual(['swept']);
    expect(logged.mock.calls.map(([message]) => message)).toEqual([
      'an idempotency event listener failed: metrics backend down (sync)',
      'an idempotency event listener failed: metrics backend down (async)',
    ]);
  });
});
