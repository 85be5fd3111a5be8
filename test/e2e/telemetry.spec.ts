import { Controller, Headers, type INestApplication, Post, Req, UseGuards } from '@nestjs/common';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { context, metrics, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { type AuthenticatedRequest, BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
import { IdempotencyService, IdempotencyTransaction, Idempotent } from '../../src/index.js';
import { appsOn, HTTP_PLATFORMS, type RunningApp } from '../support/apps.js';
import { writePayment } from '../support/common-routes.controller.js';
import { paymentCount } from '../support/database.js';
import { entered, hold, release } from '../support/latch.js';
import { newCaller, newKey, send } from '../support/http.js';

const exporter = new InMemorySpanExporter();
/** A reader the test collects from when it wants. */
class PullReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

/**
 * What an HTTP server instrumentation does: the request's span, active from the server's
 * 'request' event until the response finished.
 */
function traceRequests(app: INestApplication): void {
  const server: Server = app.getHttpServer();
  const listeners = server.listeners('request') as Array<(request: IncomingMessage, response: ServerResponse) => void>;
  server.removeAllListeners('request');
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const span = trace.getTracer('test-http').startSpan('HTTP POST');
    response.on('finish', () => span.end());
    context.with(trace.setSpan(context.active(), span), () => {
      for (const listener of listeners) listener.call(server, request, response);
    });
  });
}

@Controller('traced')
@UseGuards(BearerAuthGuard)
class TracedController {
  constructor(private readonly tx: IdempotencyTransaction) {}

  @Post()
  @Idempotent()
  async pay(@Req() request: AuthenticatedRequest, @Headers('x-hold') held?: string): Promise<object> {
    if (held) await hold(held);
    return trace.getTracer('test-app').startActiveSpan('payment.write', async (span) => {
      const payment = await writePayment(this.tx, request);
      span.end();
      return { id: payment.id };
    });
  }
}

describe.each(HTTP_PLATFORMS)("OpenTelemetry (the SDK's in-memory exporter), on %s", (platform) => {
  const { startLab } = appsOn(platform);
  let lab: RunningApp;
  let reader: PullReader;
  beforeAll(async () => {
    reader = new PullReader();
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
    lab = await startLab({}, { controllers: [TracedController], configure: traceRequests });
  });
  afterAll(async () => {
    await lab.close();
    trace.disable();
    metrics.disable();
    context.disable();
  });
  beforeEach(() => exporter.reset());

  const spans = () => exporter.getFinishedSpans();
  const named = (name: string) => spans().filter((span) => span.name === name);
  const parentOf = (span: ReadableSpan) =>
    spans().find((other) => other.spanContext().spanId === span.parentSpanContext?.spanId);

  it("a fresh key: reserve, run and record spans under the request's span, the handler's own span under run, outcome executed", async () => {
    const caller = newCaller();
    const key = newKey();
    expect((await send(`${lab.url}/traced`, { key, caller, body: { amount: 1 } })).status).toBe(201);
    const [request] = named('HTTP POST');
    const [reserve] = named('idempotency.reserve');
    const [run] = named('idempotency.run');
    const [record] = named('idempotency.record');
    for (const stage of [reserve, run, record]) {
      expect(parentOf(stage!)).toBe(request);
      expect(stage!.attributes).toMatchObject({
        'idempotency.route': 'TracedController.pay',
        'idempotency.mode': 'transactional',
        'idempotency.host': 'typeorm',
      });
    }
    expect(parentOf(named('payment.write')[0]!)).toBe(run);
    expect(record!.attributes['idempotency.outcome']).toBe('executed');
    expect(request!.attributes['idempotency.outcome']).toBe('executed');
    // Never the key, the caller, or the body.
    const values = JSON.stringify(spans().map((span) => span.attributes));
    expect(values).not.toContain(key);
    expect(values).not.toContain(caller);
    expect(await paymentCount(caller)).toBe(1);
  });

  it('a replay, a conflict and another payload: outcome replayed, conflict, mismatch', async () => {
    const caller = newCaller();
    const key = newKey();
    await send(`${lab.url}/traced`, { key, caller, body: { amount: 1 } });
    exporter.reset();
    await send(`${lab.url}/traced`, { key, caller, body: { amount: 1 } });
    expect(named('idempotency.reserve')[0]!.attributes['idempotency.outcome']).toBe('replayed');
    expect(named('idempotency.replay')[0]!.attributes['idempotency.outcome']).toBe('replayed');
    expect(named('idempotency.run')).toEqual([]);
    exporter.reset();
    expect((await send(`${lab.url}/traced`, { key, caller, body: { amount: 2 } })).status).toBe(422);
    expect(named('idempotency.reserve')[0]!.attributes['idempotency.outcome']).toBe('mismatch');

    const heldKey = newKey();
    const first = send(`${lab.url}/traced`, { key: heldKey, caller, body: {}, headers: { 'x-hold': heldKey } });
    await entered(heldKey);
    exporter.reset();
    expect((await send(`${lab.url}/traced`, { key: heldKey, caller, body: {} })).status).toBe(409);
    expect(named('idempotency.reserve')[0]!.attributes['idempotency.outcome']).toBe('conflict');
    release(heldKey);
    expect((await first).status).toBe(201);
  });

  it("IdempotencyService.run() makes the same spans: reserve, run (the work's own span under it) and record, then reserve and replay", async () => {
    const idempotency = lab.app.get(IdempotencyService);
    const scope = `traced-run-${newKey()}`;
    let writes = 0;
    const work = () =>
      trace.getTracer('test-app').startActiveSpan('report.write', (span) => {
        writes++;
        span.end();
        return { written: true };
      });
    const parent = trace.getTracer('test-job').startSpan('nightly job');
    const first = await context.with(trace.setSpan(context.active(), parent), () =>
      idempotency.run({ scope, key: 'day-1' }, work),
    );
    parent.end();
    expect(first).toEqual({ kind: 'executed', value: { written: true } });
    const [reserve] = named('idempotency.reserve');
    const [run] = named('idempotency.run');
    const [record] = named('idempotency.record');
    for (const stage of [reserve, run, record]) {
      expect(parentOf(stage!)).toBe(named('nightly job')[0]);
      expect(stage!.attributes).toMatchObject({ 'idempotency.route': scope, 'idempotency.mode': 'transactional' });
    }
    expect(parentOf(named('report.write')[0]!)).toBe(run);
    expect(record!.attributes['idempotency.outcome']).toBe('executed');
    exporter.reset();
    expect(await idempotency.run({ scope, key: 'day-1' }, work)).toEqual({
      kind: 'replayed',
      value: { written: true },
    });
    expect(named('idempotency.reserve')[0]!.attributes['idempotency.outcome']).toBe('replayed');
    expect(named('idempotency.replay')[0]!.attributes['idempotency.outcome']).toBe('replayed');
    expect(named('idempotency.run')).toEqual([]);
    expect(writes).toBe(1);
  });

  it('counts requests by route and outcome through the OTel meter', async () => {
    const caller = newCaller();
    const key = newKey();
    await send(`${lab.url}/traced`, { key, caller, body: { amount: 1 } });
    await send(`${lab.url}/traced`, { key, caller, body: { amount: 1 } });
    const { resourceMetrics } = await reader.collect();
    const all = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
    const requests = all.find((metric) => metric.descriptor.name === 'idempotency.requests')!;
    const count = (outcome: string) =>
      requests.dataPoints.find(
        (point) =>
          point.attributes['idempotency.route'] === 'TracedController.pay' &&
          point.attributes['idempotency.outcome'] === outcome,
      )?.value;
    expect(count('executed')).toBeGreaterThanOrEqual(1);
    expect(count('replayed')).toBeGreaterThanOrEqual(1);
    expect(all.map((metric) => metric.descriptor.name)).toContain('idempotency.handler.duration');
  });
});
