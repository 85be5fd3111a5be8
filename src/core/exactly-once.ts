import { Inject, Injectable, Logger } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { ShuttingDownError } from './key-drain.js';
import { IdempotencyEvents } from '../observe/events/idempotency-events.js';
import type { KeyHold } from './hold/key-hold.js';
import { DatabaseHost } from '../hosts/database-host.js';
import { executionContext } from '../hosts/execution-context.js';
import type { IdempotentRequest } from '../key/idempotent-request.js';
import { UnreadableOutcomeError } from '../store/protect/unreadable-outcome.error.js';
import { TablesNotMigratedError } from '../store/table/tables-not-migrated.error.js';
import { decideWork } from './outcome-decision.js';
import { KeyReserver, type ReservationRules } from './reserve/key-reserver.js';
import { carryOut } from './hold/carry-out.js';
import { keyExecution } from './key-execution.js';
import { KeyTtls } from './key-ttls.js';
import type { RunOutcome, UnavailableReason } from './run-outcome.js';
import { failureRecord, recordedResult, resultRecord } from './stored-result.js';
import { isTransientFailure } from './transient-failure.js';
import { UnrecordableResultError } from './unrecordable-result.error.js';
import type { StoredResponse } from '../store/stored-response.js';

const logger = new Logger('Idempotency');

/** What the core needs of an entry's settings to run work under a key. */
export interface RunRules extends ReservationRules {
  /** The work's name in events, metrics and logs (`Controller.method`, a consumer's or a call's name). */
  readonly handler: string;
  /** The broker a message entry names in its events; none for other entries. */
  readonly transport?: string;
}

/** What the entry decides of a failure of the work. */
export interface FailurePolicy {
  /** Whether this failure (never the store's) is recorded, so that a retry gets it instead of running. */
  recordFailure(error: unknown): boolean;
  /** The attempts a recorded failure says were made. */
  readonly attempts: number;
}

/** A failure is never recorded: the key is freed and the writes undone, and a retry runs the work again. */
export const RELEASE_EVERY_FAILURE: FailurePolicy = { recordFailure: () => false, attempts: 1 };

/**
 * The exactly-once core every entry runs its work through: the key reserved (the replay cache,
 * then the key's lock and row, in the entry's mode), the work run once with the key held (in
 * transactional mode inside the key's transaction, reachable by every tool), then its result
 * recorded and committed with the work's writes, or the key freed with the writes undone, as
 * `decideWork()` says. It tells the entry what happened; the entry maps that to its own answer.
 */
@Injectable()
export class ExactlyOnce {
  constructor(
    private readonly reserver: KeyReserver,
    private readonly events: IdempotencyEvents,
    @Inject(DatabaseHost) private readonly host: DatabaseHost,
    private readonly ttls: KeyTtls,
  ) {}

  async run<T>(
    request: IdempotentRequest,
    rules: RunRules,
    work: () => T | Promise<T>,
    policy: FailurePolicy,
  ): Promise<RunOutcome<Awaited<T>>> {
    const { handler, transport } = rules;
    const extending = this.ttls.report(request.ttlMs);
    if (extending) await extending;
    let reservation;
    try {
      reservation = await this.reserver.reserve(request, rules);
    } catch (error) {
      return { kind: 'unavailable', error, reason: this.refusal(error, rules) };
    }
    switch (reservation.kind) {
      case 'held':
        return this.runHeld(reservation.hold, request, rules, work, policy);
      case 'completed': {
        this.events.emit({ type: 'replayed', handler, status: reservation.response.status, transport });
        const recorded = recordedResult(reservation.response);
        return recorded.kind === 'failed'
          ? { kind: 'failed-before', error: recorded.error }
          : { kind: 'replayed', value: recorded.value };
      }
      case 'mismatch':
        this.events.emit({ type: 'mismatch', handler, transport });
        return { kind: 'mismatch' };
      case 'in-progress':
        this.events.emit({ type: 'in-progress', handler, transport });
        return { kind: 'held', retryAfterSeconds: reservation.retryAfterSeconds };
    }
  }

  /** Why no key was taken, said in the events and the log. */
  private refusal(error: unknown, { handler, transport }: RunRules): UnavailableReason {
    if (error instanceof ShuttingDownError) {
      this.events.emit({ type: 'refused', handler, reason: 'shutting-down', transport });
      return 'shutting-down';
    }
    if (error instanceof TablesNotMigratedError) {
      this.events.emit({ type: 'refused', handler, reason: 'not-migrated', transport });
      logger.error(`${handler}: ${error.message}; nothing ran`);
      return 'not-migrated';
    }
    if (error instanceof UnreadableOutcomeError) {
      this.events.emit({ type: 'refused', handler, reason: 'outcome-unreadable', transport });
      logger.error(`${handler}: ${error.message}; nothing ran`);
      return 'outcome-unreadable';
    }
    this.events.emit({ type: 'refused', handler, reason: 'store-unavailable', transport });
    logger.error(`${handler}: reserving its key failed (nothing ran): ${messageOf(error)}`);
    return 'store';
  }

  private async runHeld<T>(
    hold: KeyHold,
    request: IdempotentRequest,
    rules: RunRules,
    work: () => T | Promise<T>,
    policy: FailurePolicy,
  ): Promise<RunOutcome<Awaited<T>>> {
    const { handler, mode, transport } = rules;
    const startedAt = performance.now();
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    let value!: Awaited<T>;
    let failure: { error: unknown } | undefined;
    try {
      value = await executionContext.run(keyExecution(request.scope, hold), () =>
        hold.enterHandler(async () => work(), settled),
      );
    } catch (error) {
      failure = { error };
    } finally {
      settle();
    }
    let result: StoredResponse | undefined;
    if (failure === undefined) {
      try {
        result = resultRecord(value);
      } catch (error) {
        failure = { error: new UnrecordableResultError(handler, error) };
      }
    }
    const transient = failure !== undefined && isTransientFailure(this.host.failureOf(failure.error));
    // In lease mode the work's effects left the database: a result it cannot record is kept as its
    // failure, so that no retry runs them again.
    const recordFailure =
      failure !== undefined &&
      !transient &&
      (policy.recordFailure(failure.error) || (mode === 'lease' && failure.error instanceof UnrecordableResultError));
    const decision = decideWork({ failed: failure !== undefined, transient, recordFailure });
    const released = (reason: 'failed' | 'lease-lost') =>
      this.events.emit({
        type: 'released',
        handler,
        mode,
        reason,
        durationMs: performance.now() - startedAt,
        transport,
      });
    const carried = await carryOut(hold, decision, () =>
      failure ? failureRecord(failure.error, policy.attempts) : result!,
    );
    switch (carried.kind) {
      case 'released':
        released('failed');
        if (!transient) return { kind: 'failed', error: failure!.error };
        logger.error(`${handler}: its database work failed (nothing kept): ${messageOf(failure!.error)}`);
        return { kind: 'unavailable', error: failure!.error, reason: 'store' };
      case 'lost':
        released('lease-lost');
        return { kind: 'lease-lost' };
      case 'failed':
        logger.error(`${handler}: recording its outcome failed (nothing kept): ${messageOf(carried.error)}`);
        released('failed');
        return { kind: 'unavailable', error: carried.error, reason: 'store' };
    }
    const durationMs = performance.now() - startedAt;
    if (failure) return { kind: 'failure-recorded', error: failure.error, durationMs };
    this.events.emit({ type: 'executed', handler, mode, status: 200, durationMs, transport });
    return { kind: 'executed', value };
  }
}

function messageOf(error: unknown): string {
  return (error as Error | undefined)?.message ?? String(error);
}
