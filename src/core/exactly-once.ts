import { Inject, Injectable, Logger } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { DatabaseHost } from '../hosts/database-host.js';
import type { IdempotentRequest } from '../key/idempotent-request.js';
import { IdempotencyEvents } from '../observe/events/idempotency-events.js';
import { IdempotencyTelemetry, type TracedOutcome } from '../observe/telemetry/idempotency-telemetry.js';
import { UnreadableOutcomeError } from '../store/protect/unreadable-outcome.error.js';
import type { StoredResponse } from '../store/stored-response.js';
import { TablesNotMigratedError } from '../store/table/tables-not-migrated.error.js';
import { type Conclusion, HeldRun } from './held-run.js';
import { ShuttingDownError } from './gates/key-drain.js';
import { KeyTtls } from './key-ttls.js';
import { awaitTurn } from './reserve/await-turn.js';
import { KeyReserver } from './reserve/key-reserver.js';
import type { RunOutcome, Tombstone, UnavailableReason } from './run-outcome.js';
import type { FailurePolicy, RunRules } from './run-rules.js';
import { failureRecord, isRecordedFailure, RECORDED_VALUE, recordedResult, resultRecord } from './stored-result.js';
import { isTransientFailure } from './transient-failure.js';
import { UnrecordableResultError } from './unrecordable-result.error.js';
import { decideWork } from './work-decision.js';

const logger = new Logger('Idempotency');

/** The outcome a reservation settles, on its span; a held key's comes with its record. */
const RESERVED: Record<Reserved['kind'], TracedOutcome | undefined> = {
  held: undefined,
  completed: 'replayed',
  mismatch: 'mismatch',
  'in-progress': 'conflict',
  tombstone: 'tombstone',
  unavailable: 'refused',
};

/** What reserving a key came to, for the entry that asked (each reported in the events already). */
export type Reserved =
  /** The key is this run's: the entry runs its work in it, and concludes it. */
  | { kind: 'held'; run: HeldRun }
  /** The key completed: the work does not run; `response` is what it recorded, for the entry to answer with. */
  | { kind: 'completed'; response: StoredResponse }
  /** The key was used with another payload: the work does not run. */
  | { kind: 'mismatch' }
  /** The key completed longer ago than its ttl, and its tombstone is kept: the work does not run; its result is gone. */
  | { kind: 'tombstone'; tombstone: Tombstone }
  /** Another run holds the key right now (past wait mode's wait): try again later. */
  | { kind: 'in-progress'; retryAfterSeconds?: number }
  /** No key was taken, and why (the store unavailable, shutting down, an unreadable outcome, no key table). */
  | { kind: 'unavailable'; error: unknown; reason: UnavailableReason };

/**
 * The exactly-once core every entry runs its work through: the key reserved (the replay cache,
 * then the key's lock and row, in the entry's mode; wait mode's wait), in the
 * `idempotency.reserve` span, with what it found reported; the work run once with the key held
 * (`HeldRun`); then its result recorded and committed with the work's writes, or the key freed with
 * the writes undone, as the entry decides. An entry with a plain result (a message, a job, a call)
 * calls `run()`, which decides by `decideWork()`; the HTTP entry, whose outcome is the answer the
 * platform writes, calls `reserve()` and concludes the `HeldRun` itself.
 */
@Injectable()
export class ExactlyOnce {
  constructor(
    private readonly reserver: KeyReserver,
    private readonly events: IdempotencyEvents,
    @Inject(DatabaseHost) private readonly host: DatabaseHost,
    private readonly ttls: KeyTtls,
    private readonly telemetry: IdempotencyTelemetry,
  ) {}

  async run<T>(
    request: IdempotentRequest,
    rules: RunRules,
    work: () => T | Promise<T>,
    policy: FailurePolicy,
  ): Promise<RunOutcome<Awaited<T>>> {
    const reserved = this.remembered(request, rules) ?? (await this.reserve(request, rules));
    switch (reserved.kind) {
      case 'held':
        return this.runHeld(reserved.run, rules, work, policy);
      case 'completed': {
        const recorded = recordedResult(reserved.response);
        return recorded.kind === 'failed'
          ? { kind: 'failed-before', error: recorded.error }
          : { kind: 'replayed', value: recorded.value };
      }
      case 'in-progress':
        return { kind: 'held', retryAfterSeconds: reserved.retryAfterSeconds };
      case 'tombstone':
        return { ...reserved, failed: isRecordedFailure(reserved.tombstone.status) };
      default:
        return reserved;
    }
  }

  /**
   * What this instance remembers of the key (a completed outcome, a mismatch), answered at once
   * without a round trip; `undefined` when only `reserve()` can tell.
   */
  remembered(request: IdempotentRequest, rules: RunRules): Reserved | undefined {
    const remembered = this.reserver.remembered(request);
    if (!remembered) return undefined;
    this.telemetry.end(this.telemetry.start('reserve', rules.handler, rules.mode), RESERVED[remembered.kind]);
    return this.reported(remembered, rules);
  }

  /** The key reserved in the entry's mode, and in wait mode waited for while another run holds it. */
  async reserve(request: IdempotentRequest, rules: RunRules): Promise<Reserved> {
    const span = this.telemetry.start('reserve', rules.handler, rules.mode);
    let reserved: Reserved;
    try {
      const extending = this.ttls.report(request.tombstoneMs ?? request.ttlMs);
      if (extending) await extending;
      let reservation = await this.reserver.reserve(request, rules);
      if (reservation.kind === 'in-progress' && rules.waitMs)
        reservation = await awaitTurn(() => this.reserver.reserve(request, rules), rules.waitMs, reservation);
      reserved =
        reservation.kind === 'held'
          ? { kind: 'held', run: new HeldRun(reservation.hold, request, rules, this.events, this.telemetry) }
          : reservation;
    } catch (error) {
      this.telemetry.end(span, 'refused', messageOf(error));
      return { kind: 'unavailable', error, reason: this.refusal(error, rules) };
    }
    this.telemetry.end(span, RESERVED[reserved.kind]);
    return this.reported(reserved, rules);
  }

  /** A reservation's finding, reported in the events (a replay in its own `idempotency.replay` span). */
  private reported(reserved: Reserved, { handler, mode, transport }: RunRules): Reserved {
    switch (reserved.kind) {
      case 'completed':
        this.events.emit({ type: 'replayed', handler, status: reserved.response.status, transport });
        this.telemetry.end(this.telemetry.start('replay', handler, mode), 'replayed');
        break;
      case 'mismatch':
        this.events.emit({ type: 'mismatch', handler, transport });
        break;
      case 'tombstone':
        this.events.emit({ type: 'tombstone', handler, status: reserved.tombstone.status, transport });
        break;
      case 'in-progress':
        this.events.emit({ type: 'in-progress', handler, transport });
        break;
    }
    return reserved;
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
    run: HeldRun,
    { handler, mode }: RunRules,
    work: () => T | Promise<T>,
    policy: FailurePolicy,
  ): Promise<RunOutcome<Awaited<T>>> {
    const startedAt = performance.now();
    let value!: Awaited<T>;
    let failure: { error: unknown } | undefined;
    try {
      value = await run.enter(async () => work());
    } catch (error) {
      failure = { error };
    } finally {
      run.settle(failure !== undefined);
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
    const conclusion: Conclusion =
      decision.action === 'release'
        ? { ...decision, reason: 'failed' }
        : { ...decision, status: failure ? undefined : RECORDED_VALUE };
    const carried = await run.conclude(conclusion, () =>
      failure ? failureRecord(failure.error, policy.attempts) : result!,
    );
    switch (carried.kind) {
      case 'released':
        if (!transient) return { kind: 'failed', error: failure!.error };
        logger.error(`${handler}: its database work failed (nothing kept): ${messageOf(failure!.error)}`);
        return { kind: 'unavailable', error: failure!.error, reason: 'store' };
      case 'lost':
        return { kind: 'lease-lost' };
      case 'failed':
        return { kind: 'unavailable', error: carried.error, reason: 'store' };
    }
    if (failure) return { kind: 'failure-recorded', error: failure.error, durationMs: performance.now() - startedAt };
    return { kind: 'executed', value };
  }
}

function messageOf(error: unknown): string {
  return (error as Error | undefined)?.message ?? String(error);
}
