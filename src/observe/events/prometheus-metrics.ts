import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { IDEMPOTENCY_SETTINGS } from '../../idempotency.constants.js';
import type { IdempotencySettings } from '../../options/settings.js';
import type { IdempotencyEvent } from './idempotency-event.js';
import { IdempotencyEvents } from './idempotency-events.js';

/** What of prom-client is used (an optional peer dependency). */
interface PromClient {
  register: PromRegistry;
  Counter: new (config: { name: string; help: string; labelNames: string[]; registers: PromRegistry[] }) => PromCounter;
  Histogram: new (config: {
    name: string;
    help: string;
    labelNames: string[];
    buckets: number[];
    registers: PromRegistry[];
  }) => PromHistogram;
}
interface PromRegistry {
  getSingleMetric(name: string): unknown;
}
interface PromCounter {
  inc(labels: Record<string, string>, value?: number): void;
}
interface PromHistogram {
  observe(labels: Record<string, string>, value: number): void;
}

/**
 * Prometheus metrics of the module's events, when `prom-client` is installed (an optional peer)
 * and `metrics` is not `false`:
 * - `idempotency_requests_total{handler, outcome}`: outcome is executed, replayed, in_progress,
 *   mismatch, released or refused (shutting down);
 * - `idempotency_handler_duration_seconds{handler, outcome}`: executed and released runs;
 * - `idempotency_keys_swept_total`;
 * - `idempotency_outbox_messages_total{publisher, outcome}` (sent, failed),
 *   `idempotency_outbox_lag_seconds{publisher}` (its commit to the broker's confirm),
 *   `idempotency_outbox_swept_total`.
 * Metrics are registered once per registry (several apps in one process share them).
 */
@Injectable()
export class PrometheusMetrics implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('IdempotencyMetrics');
  private unsubscribe?: () => void;

  constructor(
    @Inject(IDEMPOTENCY_SETTINGS) private readonly settings: IdempotencySettings,
    private readonly events: IdempotencyEvents,
  ) {}

  async onModuleInit(): Promise<void> {
    if (this.settings.metrics === false) return;
    let client: PromClient;
    try {
      client = (await import('prom-client' as string)) as PromClient;
      client = (client as unknown as { default?: PromClient }).default ?? client;
    } catch {
      return;
    }
    const registry = (this.settings.metrics.registry as PromRegistry | undefined) ?? client.register;
    const prefix = this.settings.metrics.prefix;
    const metric = <T>(name: string, create: (name: string) => T): T =>
      (registry.getSingleMetric(prefix + name) as T | undefined) ?? create(prefix + name);
    const requests = metric(
      'idempotency_requests_total',
      (name) =>
        new client.Counter({
          name,
          help: 'Idempotent requests by outcome',
          labelNames: ['handler', 'outcome'],
          registers: [registry],
        }),
    );
    const durations = metric(
      'idempotency_handler_duration_seconds',
      (name) =>
        new client.Histogram({
          name,
          help: 'Time from reservation to recorded outcome (or release) of idempotent handler runs',
          labelNames: ['handler', 'outcome'],
          buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
          registers: [registry],
        }),
    );
    const messages = metric(
      'idempotency_messages_total',
      (name) =>
        new client.Counter({
          name,
          help: 'Idempotent message deliveries by outcome',
          labelNames: ['handler', 'transport', 'outcome'],
          registers: [registry],
        }),
    );
    const swept = metric(
      'idempotency_keys_swept_total',
      (name) =>
        new client.Counter({
          name,
          help: 'Expired idempotency keys deleted by the sweeper',
          labelNames: [],
          registers: [registry],
        }),
    );
    const relayed = metric(
      'idempotency_outbox_messages_total',
      (name) =>
        new client.Counter({
          name,
          help: 'Outbox messages the relay published, by publisher and outcome (sent, failed: tried again)',
          labelNames: ['publisher', 'outcome'],
          registers: [registry],
        }),
    );
    const relayLag = metric(
      'idempotency_outbox_lag_seconds',
      (name) =>
        new client.Histogram({
          name,
          help: "Time from an outbox message's commit to the broker's confirm",
          labelNames: ['publisher'],
          buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
          registers: [registry],
        }),
    );
    const outboxSwept = metric(
      'idempotency_outbox_swept_total',
      (name) =>
        new client.Counter({
          name,
          help: 'Sent outbox messages deleted after outbox.keepSent',
          labelNames: [],
          registers: [registry],
        }),
    );
    this.unsubscribe = this.events.subscribe((event: IdempotencyEvent) => {
      if (event.type === 'swept') return swept.inc({}, event.deleted);
      if (event.type === 'outbox-swept') return outboxSwept.inc({}, event.deleted);
      if (event.type === 'outbox-relayed') {
        relayed.inc({ publisher: event.publisher, outcome: event.outcome });
        if (event.outcome === 'sent') relayLag.observe({ publisher: event.publisher }, event.lagMs / 1000);
        return;
      }
      const outcome = event.type.replace('-', '_');
      if (event.transport !== undefined)
        return messages.inc({ handler: event.handler, transport: event.transport, outcome });
      requests.inc({ handler: event.handler, outcome });
      if (event.type === 'executed' || event.type === 'released') {
        durations.observe({ handler: event.handler, outcome }, event.durationMs / 1000);
      }
    });
    this.logger.log('Prometheus metrics registered (prom-client)');
  }

  onApplicationShutdown(): void {
    this.unsubscribe?.();
  }
}
