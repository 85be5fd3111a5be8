import { type CallHandler, Logger, StreamableFile } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Observable, ReplaySubject, type Subscription } from 'rxjs';
import { isTransientFailure } from '../../core/transient-failure.js';
import type { DatabaseFailure } from '../../hosts/database-failures.js';
import type { RouteSettings } from '../../options/settings.js';
import { Problems } from '../problems/problems.js';
import type { Answer } from './outcome-decision.js';
import type { OutcomeRecorder } from './outcome-recorder.js';
import { withProblemHeaders } from '../problems/problem-headers.js';
import { type CapturedResponse, captureResponse, type ResponseReplacement } from '../response/response-capture.js';

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

const logger = new Logger('Idempotency');

/**
 * Where a run stands. The outcome is concluded once both the handler has settled and the
 * response has ended, in whichever order they come:
 * - `running`: the handler runs, nothing was answered;
 * - `answered`: the response ended before the handler settled (`answer`: sent by the handler
 *   itself, and held until the outcome is concluded, or by someone else, and gone already);
 * - `settled`: the handler completed or failed, and its response has not ended yet;
 * - `done`: the outcome was concluded (recorded, or the key released).
 */
type RunState =
  | { kind: 'running' }
  | {
      kind: 'answered';
      answer: Exclude<Answer, 'after-handler'>;
      captured: CapturedResponse;
      concluded: (result: Promise<ResponseReplacement | void>) => void;
    }
  | { kind: 'settled'; failed: boolean }
  | { kind: 'done' };

/**
 * One run of a handler with its key held (inside the key's transaction in transactional mode),
 * until its outcome is recorded, or its key released, before the response leaves.
 */
export class KeyRun {
  private state: RunState = { kind: 'running' };

  constructor(
    private readonly route: RouteSettings,
    private readonly recorder: OutcomeRecorder,
    /** What the handler's error says of the database (the host's `failureOf`). */
    private readonly failureOf: (error: unknown) => DatabaseFailure | undefined,
  ) {}

  /**
   * Runs the handler. Its Observable is subscribed here, not only by Nest, so that the hold ends
   * once the handler is done even when Nest stops listening (a client gone, an outer timeout
   * answered). One plain observer does what operators would (refuse a `StreamableFile` or a
   * second value, turn database trouble into a 503, note a failure): this runs on every request.
   */
  start(next: CallHandler, raw: ServerResponse): Observable<unknown> {
    captureResponse(
      raw,
      (captured) => this.responseEnded(captured),
      () =>
        void this.recorder.run.settled
          .then(() => this.abandoned())
          .catch((error: Error) => logFailure('releasing a key', error)),
    );
    const outcome = new ReplaySubject<unknown>(1);
    let values = 0;
    let stopped = false;
    let subscription: Subscription | undefined;
    // Settled before the outcome is passed on: an outer retry() subscribes again at once.
    const fail = (error: unknown): void => {
      if (stopped) return;
      stopped = true;
      subscription?.unsubscribe();
      this.handlerSettled(true);
      outcome.error(error);
    };
    subscription = this.recorder.run
      .enter(() => next.handle())
      .subscribe({
        next: (value) => {
          if (stopped) return;
          if (values++ > 0) return fail(withProblemHeaders(raw, Problems.severalValues(), this.route.problemLink));
          if (value instanceof StreamableFile)
            return fail(withProblemHeaders(raw, Problems.notReplayable('a StreamableFile'), this.route.problemLink));
          outcome.next(value);
        },
        error: (error: unknown) => fail(this.handlerError(raw, error)),
        complete: () => {
          if (stopped) return;
          stopped = true;
          this.handlerSettled(false);
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
    const { kind } = this.state;
    return (kind === 'running' || kind === 'answered') && this.recorder.run.isCurrent();
  }

  /** The handler completed or failed. */
  private handlerSettled(failed: boolean): void {
    const state = this.state;
    this.recorder.run.settle(failed);
    if (state.kind === 'running') {
      this.state = { kind: 'settled', failed };
    } else if (state.kind === 'answered') {
      this.state = { kind: 'done' };
      state.concluded(this.recorder.conclude(state.captured, state.answer, failed));
    }
  }

  /**
   * The response ended. Before the handler settled, it was sent by the handler itself
   * (`@Res({ passthrough: true })`, or an Observable that goes on after its value) or by someone
   * else (an outer interceptor's timeout). Either way the key stays held until the handler is
   * done, so that no retry runs beside it; the handler's own answer waits for the outcome, as
   * every answer does; someone else's leaves at once.
   */
  private responseEnded(captured: CapturedResponse): Promise<ResponseReplacement | void> {
    const state = this.state;
    if (state.kind === 'settled') {
      this.state = { kind: 'done' };
      return this.recorder.conclude(captured, 'after-handler', state.failed);
    }
    if (state.kind !== 'running') return Promise.resolve();
    if (this.recorder.run.isCurrent()) {
      const warning = setTimeout(() => this.warnHeldAnswer(), SELF_SENT_WARNING_MS).unref();
      return new Promise<ResponseReplacement | void>((resolve, reject) => {
        this.state = {
          kind: 'answered',
          answer: 'self-sent',
          captured,
          concluded: (result) => {
            clearTimeout(warning);
            result.then(resolve, reject);
          },
        };
      });
    }
    this.state = {
      kind: 'answered',
      answer: 'early',
      captured,
      concluded: (result) =>
        void result.catch((error: Error) => logFailure('ending a key after an early answer', error)),
    };
    return Promise.resolve();
  }

  /**
   * The client went away before the response ended, and the handler has now settled. Its
   * outcome is still recorded when the response ends, so that the client's retry gets it instead
   * of running the handler again (whose effects outside the database may already have
   * happened); the key is released only if the response never ends.
   */
  private async abandoned(): Promise<void> {
    if (this.state.kind !== 'settled') return;
    await sleep(ABANDONED_END_GRACE_MS, undefined, { ref: false });
    if (this.state.kind !== 'settled') return;
    this.state = { kind: 'done' };
    await this.recorder.abandon();
  }

  /**
   * What a handler's error becomes: database unavailability, a serialization failure or a
   * deadlock a 503 problem (the writes are undone and the key freed, so a retry runs again),
   * anything else itself.
   */
  private handlerError(raw: ServerResponse, error: unknown): unknown {
    if (!isTransientFailure(this.failureOf(error))) return error;
    logFailure("the handler's database work", error as Error);
    return withProblemHeaders(
      raw,
      Problems.storeUnavailable('handling', this.route.retryAfterSeconds),
      this.route.problemLink,
    );
  }

  private warnHeldAnswer(): void {
    logger.warn(
      `${this.route.handler} sent its own answer ${SELF_SENT_WARNING_MS / 1000} s ago and has not returned: its answer is held until it ` +
        "does. A handler that waits for its response to finish ('finish', stream.pipeline(…, res), finished(res)) never returns " +
        'on an @Idempotent() route; return the body instead, or let the response end without waiting for it.',
    );
  }
}

function logFailure(what: string, error: Error): void {
  logger.error(`${what} failed: ${error.message}`);
}
