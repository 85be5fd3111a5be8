import { Logger } from '@nestjs/common';
import type { HeldRun } from '../../core/held-run.js';
import type { IdempotencySettings, RouteSettings } from '../../options/settings.js';
import { type IdempotencyProblem, Problems } from '../problems/problems.js';
import { problemHeaders } from '../problems/problem-headers.js';
import { keyExpiresValue, problemReplacement, toStoredResponse } from '../response/replay.js';
import { KEY_EXPIRES_HEADER } from '../../idempotency.constants.js';
import type { CapturedResponse, ResponseReplacement } from '../response/response-capture.js';
import { type Answer, decide, type Replacement, replacementAfter } from './outcome-decision.js';

const logger = new Logger('Idempotency');

/** Node keeps header names lower-case. */
const KEY_EXPIRES_HEADER_NAME = KEY_EXPIRES_HEADER.toLowerCase();

/**
 * The HTTP entry's conclusion of one run: the captured answer read as `decide()`'s outcome, the
 * decision carried out by the core (`HeldRun.conclude()`) before the response leaves; returns the
 * problem to send instead of the app's answer, if any (`replacementAfter()`).
 */
export class OutcomeRecorder {
  constructor(
    private readonly settings: IdempotencySettings,
    private readonly route: RouteSettings,
    readonly run: HeldRun,
  ) {}

  async conclude(
    captured: CapturedResponse,
    answer: Answer,
    handlerFailed: boolean,
  ): Promise<ResponseReplacement | void> {
    const { run, route, settings } = this;
    if (!run.isOpen) return;
    const decision = decide({
      answer,
      handlerFailed,
      status: captured.status,
      storable: route.storeResponse(captured.status),
      fits: captured.body.length <= route.maxResponseBytes,
    });
    // The key's expiry goes out with the answer it records (not one that left already), and is
    // stored with it for replays; read before the row's is written, it names no time after the
    // row's while the app's clock and the database's agree.
    if (decision.action === 'record' && route.expiryHeader && answer !== 'early')
      captured.headers[KEY_EXPIRES_HEADER_NAME] = keyExpiresValue(Date.now() + (route.tombstoneMs ?? route.ttlMs));
    const carried = await run.conclude(
      decision.action === 'record' ? { ...decision, status: captured.status } : decision,
      () => toStoredResponse(captured, settings.replayHeaders, route.redaction),
    );
    const replaceWith = carried.kind === 'released' ? carried.decision.replaceWith : replacementAfter(carried);
    return replaceWith && this.replacement(replaceWith, captured);
  }

  /** Frees the key without an outcome (the client went away and the response never ended). */
  abandon(): Promise<void> {
    return this.run.abandon();
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
}
