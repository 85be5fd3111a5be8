import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { IdempotencyEvent } from '../events/idempotency-event.js';
import { IdempotencyEvents } from '../events/idempotency-events.js';
import { IDEMPOTENCY_SETTINGS } from '../../idempotency.constants.js';
import type { Attributes, OtelApi, OtelSpan, OtelTracer } from './open-telemetry.js';

/** A request stage traced as a span of its own. */
export type TracedStage = 'reserve' | 'run' | 'record' | 'replay';

/** What a request's outcome is called on its spans (`idempotency.outcome`). */
export type TracedOutcome = 'executed' | 'replayed' | 'conflict' | 'mismatch' | 'tombstone' | 'refused' | 'released';

/** What telemetry reads of the module's settings (`IdempotencySettings` has it). */
interface TelemetrySettings {
  readonly openTelemetry: boolean;
  /** The node-postgres host's pool, when the app gave one. */
  readonly pool?: unknown;
}

const INSTRUMENTATION = 'nestjs-pg-idempotency';

/**
 * OpenTelemetry, when `@opentelemetry/api` is installed (an optional peer) and `openTelemetry` is
 * not `false`: a span per request stage (`idempotency.reserve`, `idempotency.run`,
 * `idempotency.record`, `idempotency.replay`), children of the span active for the request (the
 * HTTP server's), with the route, the mode, the host and the outcome as attributes, never the
 * key, the caller or a body; the handler's own spans are children of `idempotency.run`. The
 * metrics of the Prometheus module, through the OTel meter (`idempotency.requests`,
 * `idempotency.messages`, `idempotency.handler.duration`, `idempotency.keys.swept`,
 * `idempotency.outbox.messages`, `idempotency.outbox.lag`). With no
 * peer, nothing is loaded and every call here returns at once.
 */
@Injectable()
export class IdempotencyTelemetry implements OnModuleInit, OnApplicationShutdown {
  private api?: OtelApi;
  private tracer?: OtelTracer;
  private unsubscribe?: () => void;
  private readonly host: string;

  constructor(
    @Inject(IDEMPOTENCY_SETTINGS) private readonly settings: TelemetrySettings,
    private readonly events: IdempotencyEvents,
  ) {
    this.host = settings.pool ? 'pg-pool' : 'typeorm';
  }

  async onModuleInit(): Promise<void> {
    if (!this.settings.openTelemetry) return;
    try {
      this.api = (await import('@opentelemetry/api' as string)) as OtelApi;
    } catch {
      return;
    }
    this.tracer = this.api.trace.getTracer(INSTRUMENTATION);
    this.meter(this.api);
    new Logger('IdempotencyTelemetry').log('OpenTelemetry spans and metrics on (@opentelemetry/api)');
  }

  onApplicationShutdown(): void {
    this.unsubscribe?.();
  }

  /** A stage's span, started now under the active one; `undefined` when tracing is off. */
  start(stage: TracedStage, handler: string, mode: string): OtelSpan | undefined {
    return this.tracer?.startSpan(
      `idempotency.${stage}`,
      { attributes: { 'idempotency.route': handler, 'idempotency.mode': mode, 'idempotency.host': this.host } },
      this.api!.context.active(),
    );
  }

  /**
   * A span of one round of the outbox's relay (`idempotency.outbox.relay`), ended by `endRelay()`;
   * `undefined` when tracing is off.
   */
  startRelay(): OtelSpan | undefined {
    return this.tracer?.startSpan('idempotency.outbox.relay', { attributes: { 'idempotency.host': this.host } });
  }

  /** Ends a relay round's span with what it did. */
  endRelay(
    span: OtelSpan | undefined,
    done: { claimed: number; sent: number; failed: number },
    failure?: string,
  ): void {
    if (!span) return;
    span.setAttributes({
      'idempotency.outbox.claimed': done.claimed,
      'idempotency.outbox.sent': done.sent,
      'idempotency.outbox.failed': done.failed,
    });
    if (failure) span.setStatus({ code: this.api!.SpanStatusCode.ERROR, message: failure });
    span.end();
  }

  /** Ends `span` with the request's outcome (also put on the request's own span) and, for a failure, its error status. */
  end(span: OtelSpan | undefined, outcome?: TracedOutcome, failure?: string): void {
    if (!span) return;
    if (outcome) {
      span.setAttributes({ 'idempotency.outcome': outcome });
      this.api!.trace.getActiveSpan()?.setAttributes({ 'idempotency.outcome': outcome });
    }
    if (failure) span.setStatus({ code: this.api!.SpanStatusCode.ERROR, message: failure });
    span.end();
  }

  /** Runs `work` with `span` active, so that what it traces is its child. */
  within<T>(span: OtelSpan | undefined, work: () => T): T {
    if (!span) return work();
    const { context, trace } = this.api!;
    return context.with(trace.setSpan(context.active(), span), work);
  }

  private meter(api: OtelApi): void {
    const meter = api.metrics.getMeter(INSTRUMENTATION);
    const requests = meter.createCounter('idempotency.requests', { description: 'Idempotent requests by outcome' });
    const messages = meter.createCounter('idempotency.messages', {
      description: 'Idempotent message deliveries by outcome',
    });
    const durations = meter.createHistogram('idempotency.handler.duration', {
      description: 'Time from reservation to recorded outcome (or release) of idempotent handler runs',
      unit: 's',
    });
    const swept = meter.createCounter('idempotency.keys.swept', {
      description: 'Expired idempotency keys deleted by the sweeper',
    });
    const relayed = meter.createCounter('idempotency.outbox.messages', {
      description: 'Outbox messages the relay published, by publisher and outcome (sent, failed: tried again)',
    });
    const relayLag = meter.createHistogram('idempotency.outbox.lag', {
      description: "Time from an outbox message's commit to the broker's confirm",
      unit: 's',
    });
    this.unsubscribe = this.events.subscribe((event: IdempotencyEvent) => {
      if (event.type === 'swept') return swept.add(event.deleted);
      if (event.type === 'outbox-swept' || event.type === 'gauges') return;
      if (event.type === 'outbox-relayed') {
        const attributes = { 'idempotency.outbox.publisher': event.publisher, 'idempotency.outcome': event.outcome };
        relayed.add(1, attributes);
        if (event.outcome === 'sent') relayLag.record(event.lagMs / 1000, attributes);
        return;
      }
      const attributes: Attributes = {
        'idempotency.route': event.handler,
        'idempotency.outcome': event.type.replace('-', '_'),
      };
      if (event.transport !== undefined) return messages.add(1, { ...attributes, 'messaging.system': event.transport });
      requests.add(1, attributes);
      if (event.type === 'executed' || event.type === 'released') durations.record(event.durationMs / 1000, attributes);
    });
  }
}
