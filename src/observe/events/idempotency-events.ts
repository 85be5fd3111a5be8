import { Injectable, Logger } from '@nestjs/common';
import type { IdempotencyEvent } from './idempotency-event.js';

/** A subscriber to {@link IdempotencyEvents}. */
export type IdempotencyEventListener = (event: IdempotencyEvent) => void;

/**
 * The module's events: executed, replayed, in-progress (409), mismatch (422), released, swept.
 * Inject it and `subscribe()` to count, log or trace them; listeners run synchronously on the
 * request's path, so keep them cheap. A listener that throws is logged and does not disturb the
 * request.
 */
@Injectable()
export class IdempotencyEvents {
  private readonly logger = new Logger('IdempotencyEvents');
  private listeners: IdempotencyEventListener[] = [];

  /** Calls `listener` with every event from now on; the returned function stops that. */
  subscribe(listener: IdempotencyEventListener): () => void {
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((existing) => existing !== listener);
    };
  }

  emit(event: IdempotencyEvent): void {
    for (const listener of this.listeners) {
      try {
        // An async listener's rejection is caught too: unhandled, it would end the process.
        const result: unknown = listener(event);
        if (isPromiseLike(result)) result.then(undefined, (error: unknown) => this.logFailure(error));
      } catch (error) {
        this.logFailure(error);
      }
    }
  }

  private logFailure(error: unknown): void {
    this.logger.error(
      `an idempotency event listener failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}
