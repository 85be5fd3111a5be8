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
  Gauge: new (config: { name: string; help: string; labelNames: string[]; registers: PromRegistry[] }) => PromGauge;
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
interface PromGauge {
  set(labels: Record<string, string>, value: number): void;
}

/**
 * Prometheus metrics of the module's events, when `prom-client` is installed (an optional peer)
 * and `metrics` is not `false`:
 * - `idempotency_requests_total{handler, outcome}`: outcome is executed, replayed, in_progress,
 *   mismatch, tombstone (a retry past the ttl met the key's tombstone), released or refused
 *   (nothing ran);
 * - `idempotency_refused_total{handler, reason}`: why nothing ran (shutting-down,
 *   store-unavailable, outcome-unreadable, not-migrated), requests and messages alike;
 * - `idempotency_handler_duration_seconds{handler, outcome}`: executed and released runs;
 * - `idempotency_keys_swept_total`;
 * - `idempotency_outbox_messages_total{publisher, outcome}` (sent, failed),
 *   `idempotency_outbox_lag_seconds{publisher}` (its commit to the broker's confirm),
 *   `idempotency_outbox_swept_total`;
 * - gauges read every `sweepInterval` by each instance (take the `max` across them):
 *   `idempotency_sweep_lag_seconds` (how long ago the oldest expired key expired),
 *   `idempotency_oldest_in_flight_seconds` (how long the oldest key this process holds has been held),
 *   and with the outbox `idempotency_outbox_unsent_messages`, `idempotency_outbox_oldest_unsent_seconds`.
 * The alert rules shipped in `alerts/` read these (docs/alerts.md). Metrics are registered once per registry (several apps in one process share them).
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
    const refused = metric(
      'idempotency_refused_total',
      (name) =>
        new client.Counter({
          name,
          help: 'Requests and messages for which no key was taken, nothing ran, by reason',
          labelNames: ['handler', 'reason'],
          registers: [registry],
        }),
    );
    const gauge = (name: string, help: string) =>
      metric(name, (full) => new client.Gauge({ name: full, help, labelNames: [], registers: [registry] }));
    const sweepLag = gauge('idempotency_sweep_lag_seconds', 'How long ago the oldest expired idempotency key expired');
    const oldestInFlight = gauge(
      'idempotency_oldest_in_flight_seconds',
      'How long the oldest idempotency key this process holds has been held',
    );
    const unsent = gauge('idempotency_outbox_unsent_messages', 'Outbox messages not yet sent');
    const oldestUnsent = gauge(
      'idempotency_outbox_oldest_unsent_seconds',
      'How long the oldest unsent outbox message has waited',
    );
    this.unsubscribe = this.events.subscribe((event: IdempotencyEvent) => {
      if (event.type === 'gauges') {
        if (event.sweepLagMs !== undefined) sweepLag.set({}, event.sweepLagMs / 1000);
        oldestInFlight.set({}, event.oldestInFlightMs / 1000);
        if (event.outbox) {
          unsent.set({}, event.outbox.unsent);
          oldestUnsent.set({}, event.outbox.oldestMs / 1000);
        }
        return;
      }
      if (event.type === 'refused') refused.inc({ handler: event.handler, reason: event.reason });
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
