import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { IdempotencyEvent } from '../observe/events/idempotency-event.js';
import { IdempotencyEvents } from '../observe/events/idempotency-events.js';

/** How many recent runs of a route the estimate reads. */
const RECENT_RUNS = 64;

/** The longest `Retry-After` the estimate gives, in seconds. */
export const MAX_ESTIMATED_RETRY_AFTER_SECONDS = 60;

/**
 * The `Retry-After` of a transactional route's 409 (a duplicate while the key is held elsewhere,
 * whose holder's progress no instance knows): the 90th percentile of the route's recent run
 * times in this process (its last 64 recorded runs, from reservation to recorded outcome), in
 * whole seconds rounded up, never under the route's `retryAfterSeconds` nor over 60 s. A route
 * with no run here yet answers its `retryAfterSeconds`. Read from the module's `executed` events,
 * so the request path does no extra work.
 */
@Injectable()
export class RetryAfterEstimate implements OnModuleDestroy {
  private readonly runs = new Map<string, { durations: number[]; next: number }>();
  private readonly unsubscribe: () => void;

  constructor(events: IdempotencyEvents) {
    this.unsubscribe = events.subscribe((event) => this.observe(event));
  }

  /** The seconds to send for `handler`, at least `floorSeconds`. */
  seconds(handler: string, floorSeconds: number): number {
    const recent = this.runs.get(handler)?.durations;
    if (!recent?.length) return floorSeconds;
    const sorted = [...recent].sort((a, b) => a - b);
    const p90 = sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.9) - 1)]!;
    return Math.min(MAX_ESTIMATED_RETRY_AFTER_SECONDS, Math.max(floorSeconds, Math.ceil(p90 / 1000)));
  }

  onModuleDestroy(): void {
    this.unsubscribe();
  }

  private observe(event: IdempotencyEvent): void {
    if (event.type !== 'executed' || event.mode !== 'transactional' || event.transport !== undefined) return;
    let route = this.runs.get(event.handler);
    if (!route) this.runs.set(event.handler, (route = { durations: [], next: 0 }));
    route.durations[route.next] = event.durationMs;
    route.next = (route.next + 1) % RECENT_RUNS;
  }
}
