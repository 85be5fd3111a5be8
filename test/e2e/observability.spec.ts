import type { LoggerService } from '@nestjs/common';
import { Registry } from 'prom-client';
import { type IdempotencyEvent, IdempotencyEvents, IdempotencySweeper } from '../../src/index.js';
import { handlerBackend, seedKeys, sql } from '../support/database.js';
import { appsOn, HTTP_PLATFORMS, type RunningApp } from '../support/apps.js';
import { LabController } from '../support/common-routes.controller.js';
import { newCaller, newKey, send } from '../support/http.js';
import { release } from '../support/latch.js';
import { FailurePolicyController } from './failure-policy.controller.js';
import { ResponseSizeController } from './response-size.controller.js';

/** Every log line, at every level, so a test can look for what must never be logged. */
class RecordingLogger implements LoggerService {
  readonly lines: string[] = [];
  log = (message: unknown) => void this.lines.push(String(message));
  error = (message: unknown) => void this.lines.push(String(message));
  warn = (message: unknown) => void this.lines.push(String(message));
  debug = (message: unknown) => void this.lines.push(String(message));
  verbose = (message: unknown) => void this.lines.push(String(message));
}

describe.each(HTTP_PLATFORMS)('observability on %s', (platform) => {
  const { startLab } = appsOn(platform);
  const registry = new Registry();
  const logger = new RecordingLogger();
  const events: IdempotencyEvent[] = [];
  let lab: RunningApp;
  beforeAll(async () => {
    lab = await startLab(
      { metrics: { registry }, sweepBatchSize: 100 },
      {
        controllers: [LabController, FailurePolicyController, ResponseSizeController],
        configure: (app) => app.useLogger(logger),
      },
    );
    lab.app.get(IdempotencyEvents).subscribe((event) => events.push(event));
  });
  afterAll(() => lab.close());
  beforeEach(() => (events.length = 0));

  it('emits executed, replayed, in-progress, mismatch and released events, named by handler, never by key', async () => {
    const caller = newCaller();
    const key = newKey();
    await send(`${lab.url}/lab/twin`, { key, caller, body: {} });
    await send(`${lab.url}/lab/twin`, { key, caller, body: {} });
    expect((await send(`${lab.url}/lab/narrow`, { key: newKey(), caller, body: { amount: 1 } })).status).toBe(201);
    const narrowKey = newKey();
    await send(`${lab.url}/lab/narrow`, { key: narrowKey, caller, body: { amount: 1 } });
    await send(`${lab.url}/lab/narrow`, { key: narrowKey, caller, body: { amount: 2 } });
    const heldKey = newKey();
    const held = send(`${lab.url}/lab/held-write`, { key: heldKey, caller, body: {} });
    await handlerBackend();
    await send(`${lab.url}/lab/held-write`, { key: heldKey, caller, body: {} });
    release(caller);
    await held;
    await send(`${lab.url}/lab/status/503`, { key: newKey(), caller, body: {} });

    const summary = events.map((event) => [event.type, 'handler' in event ? event.handler : undefined]);
    expect(summary).toEqual([
      ['executed', 'LabController.twin'],
      ['replayed', 'LabController.twin'],
      ['executed', 'LabController.narrow'],
      ['executed', 'LabController.narrow'],
      ['mismatch', 'LabController.narrow'],
      ['in-progress', 'LabController.heldWrite'],
      ['executed', 'LabController.heldWrite'],
      ['released', 'LabController.status'],
    ]);
    expect(events[0]).toMatchObject({ mode: 'transactional', status: 201, durationMs: expect.any(Number) });
    expect(events[7]).toMatchObject({ reason: 'not-stored', status: 503 });
    expect(JSON.stringify(events)).not.toContain(key);
  });

  it('exports Prometheus counters and a handler-duration histogram when prom-client is installed', async () => {
    const caller = newCaller();
    const key = newKey();
    await send(`${lab.url}/lab/twin`, { key, caller, body: {} });
    await send(`${lab.url}/lab/twin`, { key, caller, body: {} });
    const text = await registry.metrics();
    expect(text).toMatch(/idempotency_requests_total\{handler="LabController.twin",outcome="executed"\} [1-9]/);
    expect(text).toMatch(/idempotency_requests_total\{handler="LabController.twin",outcome="replayed"\} [1-9]/);
    expect(text).toMatch(
      /idempotency_handler_duration_seconds_count\{handler="LabController.twin",outcome="executed"\} [1-9]/,
    );
  });

  it('counts swept rows, in an event and a counter', async () => {
    const caller = newCaller();
    await seedKeys(caller, 250, '-1 second');
    const result = await lab.app.get(IdempotencySweeper).sweep();
    expect(events).toContainEqual(expect.objectContaining({ type: 'swept', deleted: result.deleted }));
    expect(result.deleted).toBeGreaterThanOrEqual(250);
    expect(await registry.metrics()).toMatch(/idempotency_keys_swept_total [1-9]\d*/);
  });

  it('never logs a key, whatever goes wrong', async () => {
    logger.lines.length = 0;
    const caller = newCaller();
    const keys = [newKey(), newKey(), newKey(), newKey()];
    // Each of these reaches one of the module's own log calls.
    const tooLarge = await send(`${lab.url}/lab/large`, { key: keys[0], caller, body: { size: 10_000 } });
    expect(tooLarge.status).toBe(500);
    const cut = send(`${lab.url}/lab/held-write`, { key: keys[1], caller, body: {} });
    await sql('SELECT pg_terminate_backend($1)', [await handlerBackend()]);
    release(caller);
    expect((await cut).status).toBe(503);
    await send(`${lab.url}/lab/fail-after-write`, { key: keys[2], caller, body: {} });
    await send(`${lab.url}/lab/file`, { key: keys[3], caller, body: {} });
    const log = logger.lines.join('\n');
    expect(log).toMatch(/larger than maxResponseBytes/);
    expect(log).toMatch(/recording an idempotent outcome failed/);
    for (const key of keys) expect(log).not.toContain(key);
  });
});
