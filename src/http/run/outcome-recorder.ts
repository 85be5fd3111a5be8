import { Logger } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import type { IdempotencyEvent } from '../../observe/events/idempotency-event.js';
import type { IdempotencyEvents } from '../../observe/events/idempotency-events.js';
import type { IdempotencySettings, RouteSettings } from '../../options/settings.js';
import { type IdempotencyProblem, Problems } from '../problems.js';
import type { CapturedResponse, ResponseReplacement } from '../response/response-capture.js';
import { problemReplacement, toStoredResponse } from '../response/replay.js';
import { problemHeaders } from '../response/problem-headers.js';
import { carryOut } from '../../core/hold/carry-out.js';
import type { KeyHold } from '../../core/hold/key-hold.js';
import type { IdempotencyTelemetry, TracedOutcome } from '../../observe/telemetry/idempotency-telemetry.js';
import { afterRecording, type Answer, decide, type Replacement } from '../../core/outcome-decision.js';

const logger = new Logger('Idempotency');

type ReleasedReason = Extract<IdempotencyEvent, { type: 'released' }>['reason'];

/**
 * The HTTP entry's conclusion of one run: the captured answer read as `decide()`'s outcome, the
 * decision carried out by the core (`carryOut`) before the response leaves, what recording came
 * to read by `afterRecording()`; emits the run's event, and returns the problem to send instead of
 * the app's answer, if any.
 */
export class OutcomeRecorder {
  private readonly startedAt = performance.now();

  constructor(
    private readonly settings: IdempotencySettings,
    private readonly events: IdempotencyEvents,
    private readonly route: RouteSettings,
    readonly hold: KeyHold,
    private readonly telemetry?: IdempotencyTelemetry,
  ) {}

  /** `record()` in the `idempotency.record` span, which ends with the outcome. */
  async conclude(
    captured: CapturedResponse,
    answer: Answer,
    handlerFailed: boolean,
  ): Promise<ResponseReplacement | void> {
    if (!this.hold.isOpen) return;
    const span = this.telemetry?.start('record', this.route.handler, this.route.mode);
    const { replacement, outcome } = await this.record(captured, answer, handlerFailed);
    this.telemetry?.end(span, outcome);
    return replacement;
  }

  private async record(
    captured: CapturedResponse,
    answer: Answer,
    handlerFailed: boolean,
  ): Promise<{ replacement?: ResponseReplacement; outcome: TracedOutcome }> {
    const { hold, route, settings } = this;
    const decision = decide({
      answer,
      handlerFailed,
      status: captured.status,
      storable: route.storeResponse(captured.status),
      fits: captured.body.length <= route.maxResponseBytes,
    });
    const carried = await carryOut(hold, decision, () =>
      toStoredResponse(captured, settings.replayHeaders, route.redaction),
    );
    if (carried.kind === 'released') {
      const { reason, status, replaceWith } = carried.decision;
      this.released(reason, status);
      return { replacement: replaceWith && this.replacement(replaceWith, captured), outcome: 'released' };
    }
    if (carried.kind === 'failed') {
      logger.error(
        `recording an idempotent outcome failed: ${(carried.error as Error)?.message ?? String(carried.error)}`,
      );
    }
    const after = afterRecording(carried);
    if (after.event === 'executed') {
      this.emit({
        type: 'executed',
        handler: route.handler,
        mode: route.mode,
        status: captured.status,
        durationMs: this.elapsed(),
      });
      return { outcome: 'executed' };
    }
    this.released(after.reason, captured.status);
    return { replacement: this.replacement(after.replaceWith, captured), outcome: 'released' };
  }

  /** Frees the key without an outcome (the client went away and the response never ended). */
  async abandon(): Promise<void> {
    if (!this.hold.isOpen) return;
    await this.hold.release();
    this.released('abandoned');
  }

  private replacement(replaceWith: Replacement, captured: CapturedResponse): ResponseReplacement {
    const problem = this.problem(replaceWith, captured);
    return problemReplacement(
      problem.problem,
      this.settings.replayHeaders,
      problemHeaders(problem, this.route.problemLink),
    );
  }

  private problem(replaceWith: Replacement, captured: CapturedResponse): IdempotencyProblem {
    const { route } = this;
    switch (replaceWith) {
      case 'failed-after-answer':
        return Problems.failedAfterAnswer();
      case 'too-large': {
        const problem = Problems.tooLarge(captured.body.length, route.maxResponseBytes);
        logger.error(problem.problem.detail);
        return problem;
      }
      case 'lease-taken-over':
        logger.warn('a lease-mode request finished after its lease was taken over; its outcome was not recorded');
        return Problems.leaseTakenOver(route.retryAfterSeconds);
      case 'outcome-refused':
        return Problems.outcomeRefused(route.mode);
      case 'store-unavailable':
        return Problems.storeUnavailable(
          route.mode === 'lease' ? 'recording-after-effects' : 'recording',
          route.retryAfterSeconds,
        );
    }
  }

  private released(reason: ReleasedReason, status?: number): void {
    const { handler, mode } = this.route;
    this.emit({ type: 'released', handler, mode, reason, status, durationMs: this.elapsed() });
  }

  private emit(event: IdempotencyEvent): void {
    this.events.emit(event);
  }

  private elapsed(): number {
    return performance.now() - this.startedAt;
  }
}
