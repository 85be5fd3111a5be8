import { Logger } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { executionContext, type IdempotentExecution } from '../hosts/execution-context.js';
import type { IdempotentRequest } from '../key/idempotent-request.js';
import type { IdempotencyEvent } from '../observe/events/idempotency-event.js';
import type { IdempotencyEvents } from '../observe/events/idempotency-events.js';
import type { IdempotencyTelemetry } from '../observe/telemetry/idempotency-telemetry.js';
import type { OtelSpan } from '../observe/telemetry/open-telemetry.js';
import type { StoredResponse } from '../store/stored-response.js';
import { type Carried, carryOut } from './hold/carry-out.js';
import type { KeyHold } from './hold/key-hold.js';
import { keyExecution } from './key-execution.js';
import type { RunRules } from './run-rules.js';

export type { Recording } from './hold/carry-out.js';

const logger = new Logger('Idempotency');

type ReleasedReason = Extract<IdempotencyEvent, { type: 'released' }>['reason'];

/**
 * What an entry decided of a held run, which the core carries out (`HeldRun.conclude()`):
 * - `record`: the result is recorded and committed with the work's writes (undone first with
 *   `rollbackWrites`); `status` is what the `executed` event reports (none for a failure whose
 *   entry reports it itself: a dead letter);
 * - `release`: the key is freed without a record, the writes committed (`keepWrites`) or undone;
 *   `reason` and `status` are what the `released` event reports.
 */
export type Conclusion =
  | { action: 'record'; rollbackWrites: boolean; status?: number }
  | { action: 'release'; keepWrites: boolean; reason: 'not-stored' | 'failed'; status?: number };

/**
 * One run of an entry's work with its key held, for every entry: the work entered in the key's
 * execution (in transactional mode inside the key's transaction, reachable by every tool) in the
 * `idempotency.run` span; then, once the entry knows its outcome (a returned value; for HTTP, the
 * answer the platform writes, which may come before the work settles), concluded once as the
 * entry decided, in the `idempotency.record` span, with the run's `executed` or `released` event.
 */
export class HeldRun {
  /** What the work's code finds in `executionContext`. */
  readonly execution: IdempotentExecution;
  private readonly startedAt = performance.now();
  /** Resolves once the work has settled (`settle()`). */
  readonly settled: Promise<void>;
  private markSettled!: () => void;
  private span?: OtelSpan;

  constructor(
    readonly hold: KeyHold,
    request: IdempotentRequest,
    private readonly rules: RunRules,
    private readonly events: IdempotencyEvents,
    private readonly telemetry: IdempotencyTelemetry,
  ) {
    this.settled = new Promise<void>((resolve) => (this.markSettled = resolve));
    this.execution = keyExecution(request.scope, hold);
  }

  /**
   * Starts the work in the key's execution and the hold's scope (the database host's, until
   * `settle()`), in the `idempotency.run` span.
   */
  enter<T>(start: () => T): T {
    const { handler, mode } = this.rules;
    this.span = this.telemetry.start('run', handler, mode);
    const entered = () => executionContext.run(this.execution, () => this.hold.enterHandler(start, this.settled));
    return this.span ? this.telemetry.within(this.span, entered) : entered();
  }

  /** The work completed or failed: its span ends, and the hold's scope with it. */
  settle(failed: boolean): void {
    this.markSettled();
    this.telemetry.end(this.span, undefined, failed ? 'the handler failed' : undefined);
    this.span = undefined;
  }

  /** Whether the code running now runs inside this run's work. */
  isCurrent(): boolean {
    return executionContext.getStore() === this.execution;
  }

  get isOpen(): boolean {
    return this.hold.isOpen;
  }

  /**
   * Carries out the entry's decision (`stored()` is what a record keeps) in the
   * `idempotency.record` span, and reports it: `executed`, or `released` with why (a record that
   * failed frees the key and undoes the writes; a lease taken over meanwhile records nothing).
   */
  async conclude<C extends Conclusion>(conclusion: C, stored: () => StoredResponse): Promise<Carried<C>> {
    const { handler, mode, transport } = this.rules;
    const span = this.telemetry.start('record', handler, mode);
    const carried = await carryOut(this.hold, conclusion, stored);
    const { status } = conclusion;
    switch (carried.kind) {
      case 'released':
        this.released(carried.decision.reason, status);
        break;
      case 'recorded':
      case 'skipped':
        if (status !== undefined)
          this.emit({ type: 'executed', handler, mode, status, durationMs: this.elapsed(), transport });
        break;
      case 'lost':
        this.released('lease-lost', status);
        break;
      case 'failed':
        logger.error(`${handler}: recording an idempotent outcome failed (nothing kept): ${messageOf(carried.error)}`);
        this.released('failed', status);
        break;
    }
    this.telemetry.end(span, carried.kind === 'recorded' || carried.kind === 'skipped' ? 'executed' : 'released');
    return carried;
  }

  /** Frees the key without an outcome (an HTTP client went away and its response never ended). */
  async abandon(): Promise<void> {
    if (!this.hold.isOpen) return;
    await this.hold.release();
    this.released('abandoned');
  }

  private released(reason: ReleasedReason, status?: number): void {
    const { handler, mode, transport } = this.rules;
    this.emit({ type: 'released', handler, mode, reason, status, durationMs: this.elapsed(), transport });
  }

  private emit(event: IdempotencyEvent): void {
    this.events.emit(event);
  }

  private elapsed(): number {
    return performance.now() - this.startedAt;
  }
}

function messageOf(error: unknown): string {
  return (error as Error | undefined)?.message ?? String(error);
}
