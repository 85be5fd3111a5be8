import { type CallHandler, Logger, StreamableFile } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Observable, ReplaySubject, type Subscription } from 'rxjs';
import type { IdempotencyEvent } from '../events/idempotency-event.js';
import type { IdempotencyEvents } from '../events/idempotency-events.js';
import type { IdempotencySettings, RouteSettings } from '../idempotency.options.js';
import type { IdempotentRequest } from '../key/idempotent-request.js';
import { IdempotencyProblem, ProblemType } from '../problems.js';
import { storeUnavailable, withProblemHeaders } from '../response/problem-headers.js';
import { type CapturedResponse, captureResponse, type ResponseReplacement } from '../response/response-capture.js';
import { multipleValuesProblem } from '../response/single-value.js';
import { tooLargeProblem } from '../response/size-limit.js';
import { problemReplacement, toStoredResponse } from '../response/stored-response.js';
import { isDatabaseUnavailable, isRefusedByDatabase } from '../store/database-errors.js';
import type { KeyHold } from '../store/key-hold.js';
import { executionContext, type IdempotentExecution } from '../transaction/transaction-context.js';

/**
 * How long a run whose client went away waits, once its handler settled, for the response to
 * end (its outcome is then recorded) before releasing the key.
 */
const ABANDONED_END_GRACE_MS = 5_000;

/**
 * How long a handler may go on after sending its own answer before the module warns that it may
 * be waiting for that answer to finish (which it holds until the handler returns).
 */
const SELF_SENT_WARNING_MS = 5_000;

/** One logger for every run (a run is created per request). */
const logger = new Logger('Idempotency');

type Released = Extract<IdempotencyEvent, { type: 'released' }>['reason'];

/**
 * One run of a handler with its key held (inside the key's transaction in transactional mode),
 * and the recording of its outcome, or the release of the key, before the response leaves.
 */
export class HeldKeyRun {
  private readonly startedAt = performance.now();
  private handlerFailed = false;
  /** The handler's Observable completed or failed (or was refused). */
  private handlerSettled = false;
  /** Resolves once the handler has settled. */
  private settled!: Promise<void>;
  /** The response ended (with or without a client to receive it): `finish()` owns the hold. */
  private ended = false;
  /** What the handler's code finds in `executionContext`. */
  private execution?: IdempotentExecution;

  constructor(
    private readonly settings: IdempotencySettings,
    private readonly events: IdempotencyEvents,
    private readonly route: RouteSettings,
    private readonly hold: KeyHold,
  ) {}

  /**
   * Runs the handler. Its Observable is subscribed here, not only by Nest, so that the hold ends
   * once the handler is done even when Nest stops listening (a client gone, an outer timeout
   * answered). One plain observer does what operators would (refuse a `StreamableFile` or a
   * second value, turn database trouble into a 503, note a failure): this runs on every request.
   */
  start(next: CallHandler, raw: ServerResponse, request: IdempotentRequest): Observable<unknown> {
    let resolveSettled!: () => void;
    this.settled = new Promise<void>((resolve) => (resolveSettled = resolve));
    const markSettled = (): void => {
      this.handlerSettled = true;
      resolveSettled();
    };
    captureResponse(
      raw,
      (captured) => this.finish(captured),
      () => void this.settled.then(() => this.abandon()).catch((error: Error) => this.logFailure('releasing a key', error)),
    );
    const outcome = new ReplaySubject<unknown>(1);
    let values = 0;
    let stopped = false;
    let subscription: Subscription | undefined;
    // Settled before the outcome is passed on: an outer retry() subscribes again at once.
    const fail = (error: unknown): void => {
      if (stopped) return;
      stopped = true;
      this.handlerFailed = true;
      subscription?.unsubscribe();
      markSettled();
      outcome.error(error);
    };
    const { hold } = this;
    // Code the handler left running (a timer, a deferred job) outlives the key's transaction: once
    // that ended it finds no transaction here, and `IdempotencyTransaction` the DataSource's.
    this.execution = {
      scope: request.scope,
      get manager() {
        return hold.manager;
      },
    };
    subscription = executionContext
      .run(this.execution, () => next.handle())
      .subscribe({
        next: (value) => {
          if (stopped) return;
          if (values++ > 0) return fail(multipleValuesProblem(raw));
          if (value instanceof StreamableFile) return fail(withProblemHeaders(raw, notReplayable('a StreamableFile')));
          outcome.next(value);
        },
        error: (error: unknown) => fail(this.handlerError(raw, error)),
        complete: () => {
          if (stopped) return;
          stopped = true;
          markSettled();
          outcome.complete();
        },
      });
    if (stopped) subscription.unsubscribe();
    return outcome;
  }

  /**
   * Whether the interceptor, entered again for this request, is entered from inside this run
   * before its handler settled: the same interceptor chain passing through once more, on its way
   * to the handler (Nest runs each next interceptor in the async context of the one before).
   */
  isEnteredFromWithin(): boolean {
    return !this.handlerSettled && this.execution !== undefined && executionContext.getStore() === this.execution;
  }

  /** What a handler's error becomes: database unavailability a 503 problem, anything else itself. */
  private handlerError(raw: ServerResponse, error: unknown): unknown {
    if (!isDatabaseUnavailable(error)) return error;
    this.logFailure("the handler's database work", error as Error);
    const detail = 'the database failed while handling this request; nothing was kept';
    return withProblemHeaders(raw, storeUnavailable(detail, this.route.retryAfterSeconds));
  }

  /**
   * Records the outcome, or releases the key, before the response leaves. A response can end
   * before the handler settled: sent by the handler itself (`@Res({ passthrough: true })`, or an
   * Observable that goes on after its value), or by someone else (an outer interceptor's
   * timeout). Either way the key stays held until the handler is done, so that no retry runs
   * beside it, and the outcome is then concluded as usual (the handler's own success commits its
   * writes with the answer the client got; a 408 or a 5xx releases the key and rolls them back).
   * The handler's own answer waits for that, as every answer does; someone else's leaves at once.
   */
  private async finish(captured: CapturedResponse): Promise<ResponseReplacement | void> {
    this.ended = true;
    if (!this.hold.isOpen) return;
    if (this.handlerSettled) return this.conclude(captured);
    if (executionContext.getStore() === this.execution) {
      const warning = setTimeout(() => this.warnHeldAnswer(), SELF_SENT_WARNING_MS).unref();
      return this.settled.then(() => {
        clearTimeout(warning);
        return this.conclude(captured, 'self-sent');
      });
    }
    void this.settled
      .then(() => this.conclude(captured, 'early'))
      .catch((error: Error) => this.logFailure('ending a key after an early answer', error));
  }

  /**
   * What `finish()` does once the handler has settled: record, or release. `self-sent`: the
   * handler sent this answer itself before it settled; if it then failed, the answer is withdrawn
   * (it may claim writes that were rolled back) and a 500 problem sent in its place. `early`:
   * someone else answered before the handler settled (an outer interceptor's fallback), and that
   * answer is gone already; if the handler then failed, its writes roll back and the key is
   * released, since an answer recorded over them would claim what never happened.
   */
  private async conclude(captured: CapturedResponse, answered?: 'self-sent' | 'early'): Promise<ResponseReplacement | void> {
    const { hold, route, settings } = this;
    if (!hold.isOpen) return;
    try {
      if (answered === 'early' && this.handlerFailed) return await this.release('failed', captured.status);
      if (answered === 'self-sent' && this.handlerFailed) {
        await this.release('not-stored', 500);
        const failed = new IdempotencyProblem(
          ProblemType.HandlerFailedAfterAnswer,
          'the handler failed after it had sent its answer, so that answer was withdrawn and nothing was recorded; a retry runs the request again',
        );
        return problemReplacement(failed.problem, settings.replayHeaders);
      }
      // A success the route does not store keeps its writes (the client was told they happened);
      // a failure's roll back. Either way the key is free: a retry runs the request again.
      if (!route.storeResponse(captured.status)) {
        return await this.release('not-stored', captured.status, captured.status < 400 && !this.handlerFailed);
      }
      const tooLarge = tooLargeProblem(captured, route.maxResponseBytes);
      if (tooLarge) {
        await this.release('failed', captured.status);
        logger.error(tooLarge.problem.detail);
        return problemReplacement(tooLarge.problem, settings.replayHeaders);
      }
      const completion = await hold.complete(toStoredResponse(captured, settings.replayHeaders), this.handlerFailed);
      if (completion !== 'lost') {
        const durationMs = performance.now() - this.startedAt;
        this.events.emit({ type: 'executed', handler: route.handler, mode: route.mode, status: captured.status, durationMs });
        return;
      }
      this.emitReleased('lease-lost', captured.status);
      logger.warn('a lease-mode request finished after its lease was taken over; its outcome was not recorded');
      const lost = new IdempotencyProblem(
        ProblemType.KeyInUse,
        'the lease on this Idempotency-Key ended before the request finished and another request took it over; retry to get the recorded outcome',
      );
      return problemReplacement(lost.problem, settings.replayHeaders, { 'Retry-After': String(route.retryAfterSeconds) });
    } catch (error) {
      if (hold.isOpen) await this.release('failed', captured.status).catch(() => undefined);
      else this.emitReleased('failed', captured.status);
      this.logFailure('recording an idempotent outcome', error as Error);
      const detail =
        route.mode === 'lease'
          ? "the outcome could not be recorded; the handler's work was done, and a retry may run it again"
          : 'the outcome could not be recorded, so nothing was kept';
      // The database refusing the transaction itself (a constraint checked at COMMIT, a
      // transaction the handler's own failed statement aborted) fails the same way on a retry.
      const problem = isRefusedByDatabase(error)
        ? new IdempotencyProblem(ProblemType.OutcomeNotRecorded, `${detail}: the database refused the transaction`)
        : storeUnavailable(detail, route.retryAfterSeconds);
      return problemReplacement(problem.problem, settings.replayHeaders, problem.headers);
    }
  }

  /**
   * The client went away before the response ended, and the handler has now settled. Its
   * outcome is still recorded when the response ends, so that the client's retry gets it instead
   * of running the handler again (whose effects outside the database may already have
   * happened); the key is released only if the response never ends.
   */
  private async abandon(): Promise<void> {
    if (this.ended) return;
    await sleep(ABANDONED_END_GRACE_MS, undefined, { ref: false });
    if (!this.ended) await this.release('abandoned');
  }

  private async release(reason: Released, status?: number, keepWrites = false): Promise<void> {
    if (!this.hold.isOpen) return;
    await this.hold.release(keepWrites);
    this.emitReleased(reason, status);
  }

  private emitReleased(reason: Released, status?: number): void {
    const { handler, mode } = this.route;
    this.events.emit({ type: 'released', handler, mode, reason, status, durationMs: performance.now() - this.startedAt });
  }

  private warnHeldAnswer(): void {
    logger.warn(
      `${this.route.handler} sent its own answer ${SELF_SENT_WARNING_MS / 1000} s ago and has not returned: its answer is held until it ` +
        "does. A handler that waits for its response to finish ('finish', stream.pipeline(…, res), finished(res)) never returns " +
        'on an @Idempotent() route; return the body instead, or let the response end without waiting for it.',
    );
  }

  private logFailure(what: string, error: Error): void {
    logger.error(`${what} failed: ${error.message}`);
  }
}

function notReplayable(what: string): IdempotencyProblem {
  return new IdempotencyProblem(
    ProblemType.ResponseNotReplayable,
    `an @Idempotent() handler returned ${what}, whose bytes cannot be recorded and replayed; return a value instead`,
  );
}
