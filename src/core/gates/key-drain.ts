import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { IDEMPOTENCY_SETTINGS } from '../../idempotency.constants.js';
import { IdempotencyError } from '../../idempotency.errors.js';

/** What the drain reads of the module's settings (`IdempotencySettings` has it). */
interface DrainSettings {
  /** How long keys in flight may take to finish once the drain began. */
  readonly drainTimeoutMs: number;
}

/** A key held in this process, as the drain sees it: lease mode's stops renewing once the bound passed. */
export interface DrainedHold {
  stopRenewing?(): void;
  /** When it entered (`performance.now()`), set by `enter()`. */
  enteredAt?: number;
}

const logger = new Logger('Idempotency');

/** A key refused because the drain began: nothing was reserved, nothing ran. */
export class ShuttingDownError extends IdempotencyError {
  constructor() {
    super('the app is shutting down: no key is taken any more');
  }
}

/**
 * The graceful drain: once the app begins to shut down (`app.close()`, or SIGTERM with
 * `enableShutdownHooks()`), no key is taken any more (the interceptor answers 503
 * `shutting-down`, a message is delivered again later), and the shutdown waits, up to
 * `drainTimeout`, until every key this process holds or is reserving has been recorded or
 * released. It runs in `onModuleDestroy`, before any pool closes and while the HTTP server still
 * answers. What is left at the bound is left to the rest of the shutdown: a key's transaction whose
 * connection closes without a COMMIT is rolled back (its key free, its writes gone), and a lease
 * stops renewing, so that it ends as a crashed holder's lease does (a lease's effect may be under
 * way: it is never released early).
 */
@Injectable()
export class KeyDrain implements OnModuleDestroy {
  private draining = false;
  /** Reservations under way and holds not yet ended. */
  private readonly inFlight = new Set<DrainedHold>();
  private idle?: () => void;

  constructor(@Inject(IDEMPOTENCY_SETTINGS) private readonly settings: DrainSettings) {}

  /** Whether the drain began: every key entering from now on is refused. */
  get isDraining(): boolean {
    return this.draining;
  }

  /** How many keys are in flight in this process. */
  get size(): number {
    return this.inFlight.size;
  }

  /**
   * A key enters (its reservation begins); `leave()` it once it is recorded, released, or refused.
   * Once the drain began, it throws `ShuttingDownError` instead.
   */
  enter(hold: DrainedHold = {}): DrainedHold {
    if (this.draining) throw new ShuttingDownError();
    hold.enteredAt = performance.now();
    this.inFlight.add(hold);
    return hold;
  }

  /** How long the key that entered first of those still in flight has been in (ms); 0 for none. */
  oldestInFlightMs(): number {
    const oldest = this.inFlight.values().next().value;
    return oldest?.enteredAt === undefined ? 0 : performance.now() - oldest.enteredAt;
  }

  leave(hold: DrainedHold): void {
    if (this.inFlight.delete(hold) && this.inFlight.size === 0) this.idle?.();
  }

  async onModuleDestroy(): Promise<void> {
    this.draining = true;
    if (this.inFlight.size === 0) return;
    const count = this.inFlight.size;
    logger.log(`draining: waiting up to ${this.settings.drainTimeoutMs} ms for ${count} key(s) in flight`);
    const abort = new AbortController();
    const idle = new Promise<'idle'>((resolve) => (this.idle = () => resolve('idle')));
    const outcome = await Promise.race([
      idle,
      sleep(this.settings.drainTimeoutMs, 'bound' as const, { signal: abort.signal }).catch(() => 'idle' as const),
    ]);
    abort.abort();
    this.idle = undefined;
    if (outcome === 'idle') return;
    logger.warn(
      `draining: ${this.inFlight.size} key(s) still in flight after ${this.settings.drainTimeoutMs} ms; a key transaction is rolled back ` +
        'when its connection closes, and a lease stops renewing and ends by itself',
    );
    for (const hold of this.inFlight) hold.stopRenewing?.();
  }
}
