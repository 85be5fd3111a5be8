import {
  type CallHandler,
  type ExecutionContext,
  Inject,
  Injectable,
  Logger,
  type NestInterceptor,
  StreamableFile,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { catchError, finalize, map, type Observable, of, ReplaySubject, tap, throwError } from 'rxjs';
import { IDEMPOTENCY_SETTINGS, IDEMPOTENT_ROUTE } from './idempotency.constants.js';
import {
  type IdempotencySettings,
  type IdempotentRouteOptions,
  resolveRouteOptions,
  type RouteSettings,
} from './idempotency.options.js';
import { type IdempotentRequest, readIdempotentRequest } from './key/idempotent-request.js';
import { IdempotencyProblem, PROBLEM_CONTENT_TYPE, ProblemType } from './problems.js';
import { type CapturedResponse, captureResponse, type ResponseReplacement } from './response/response-capture.js';
import { problemReplacement, replayOf, toStoredResponse } from './response/stored-response.js';
import { refuseMultipleValues } from './response/single-value.js';
import { tooLargeProblem } from './response/size-limit.js';
import { IdempotencyStore } from './store/idempotency.store.js';
import { isDatabaseUnavailable } from './store/database-errors.js';
import type { KeyHold } from './store/key-hold.js';
import type { Reservation } from './store/reservation.js';
import { executionContext } from './transaction/transaction-context.js';

/** Marks a request this interceptor already handles (class- and method-level `@Idempotent()`). */
const HANDLED = Symbol('nestjs-pg-idempotency:handled');

/**
 * The request pipeline of an `@Idempotent()` route: parse → reserve → run or replay → record.
 * The outcome is captured where the platform writes it, after every serializer, interceptor and
 * exception filter, and recorded (or the key released) before the response leaves.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  private readonly logger = new Logger('Idempotency');
  private readonly routes = new WeakMap<object, RouteSettings>();

  constructor(
    @Inject(IDEMPOTENCY_SETTINGS) private readonly settings: IdempotencySettings,
    private readonly store: IdempotencyStore,
    private readonly reflector: Reflector,
  ) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    if (context.getType() !== 'http') return next.handle();
    const request = context.switchToHttp().getRequest();
    if (request[HANDLED]) return next.handle();
    request[HANDLED] = true;
    const response = context.switchToHttp().getResponse();
    const raw: ServerResponse = response.raw ?? response;
    const route = this.routeSettings(context);
    try {
      const idempotent = readIdempotentRequest(context, this.settings, route);
      if (!idempotent) return next.handle();
      let reservation = await this.reserve(raw, idempotent, route);
      if (reservation.kind === 'in-progress' && route.waitMs > 0) reservation = await this.awaitTurn(raw, idempotent, route);
      switch (reservation.kind) {
        case 'held':
          return this.execute(next, raw, idempotent, route, reservation.hold);
        case 'completed':
          captureResponse(raw, async () => replayOf(reservation.response, this.settings.replayHeaders), () => undefined);
          return of(undefined);
        case 'mismatch':
          throw new IdempotencyProblem(
            ProblemType.KeyReused,
            'this Idempotency-Key was already used with a different request payload; use a new key for a new request',
          );
        case 'in-progress':
          throw new IdempotencyProblem(
            ProblemType.KeyInUse,
            'a request with this Idempotency-Key is still being processed; retry after the Retry-After delay',
            { 'Retry-After': String(reservation.retryAfterSeconds ?? route.retryAfterSeconds) },
          );
      }
    } catch (error) {
      if (error instanceof IdempotencyProblem) {
        raw.setHeader('Content-Type', PROBLEM_CONTENT_TYPE);
        for (const [name, value] of Object.entries(error.headers)) raw.setHeader(name, value);
      }
      throw error;
    }
  }

  private async reserve(raw: ServerResponse, request: IdempotentRequest, route: RouteSettings): Promise<Reservation> {
    const key = { ...request, ttlMs: route.ttlMs };
    try {
      return route.mode === 'lease'
        ? await this.store.reserveLease(key, route.leaseMs)
        : await this.store.reserve(key);
    } catch (error) {
      this.logFailure('reserving an idempotency key', error as Error);
      throw this.storeUnavailable(raw, route, 'the idempotency store cannot be reached');
    }
  }

  /**
   * Wait mode: asks again, with a growing, jittered pause (50 ms to 500 ms) and no connection
   * held in between, until the key is no longer in progress or `route.waitMs` has passed.
   */
  private async awaitTurn(raw: ServerResponse, request: IdempotentRequest, route: RouteSettings): Promise<Reservation> {
    const deadline = Date.now() + route.waitMs;
    let pause = 50;
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) return { kind: 'in-progress' };
      await sleep(Math.min(left, pause / 2 + Math.random() * pause));
      pause = Math.min(pause * 2, 500);
      const reservation = await this.reserve(raw, request, route);
      if (reservation.kind !== 'in-progress') return reservation;
    }
  }

  /** A 503 problem for database trouble, its headers already on the response. */
  private storeUnavailable(raw: ServerResponse, route: RouteSettings, detail: string): IdempotencyProblem {
    const problem = new IdempotencyProblem(ProblemType.StoreUnavailable, `${detail}; retry later with the same key`, {
      'Retry-After': String(route.retryAfterSeconds),
    });
    raw.setHeader('Content-Type', PROBLEM_CONTENT_TYPE);
    for (const [name, value] of Object.entries(problem.headers)) raw.setHeader(name, value);
    return problem;
  }

  /**
   * Runs the handler with the key held (inside its transaction in transactional mode). The
   * handler's Observable is subscribed here, not only by Nest, so that a client that goes away
   * mid-request still lets the hold end (released) once the handler is done.
   */
  private execute(
    next: CallHandler,
    raw: ServerResponse,
    request: IdempotentRequest,
    route: RouteSettings,
    hold: KeyHold,
  ): Observable<unknown> {
    let handlerFailed = false;
    let markSettled!: () => void;
    const settled = new Promise<void>((resolve) => (markSettled = resolve));
    captureResponse(
      raw,
      (captured) => this.finish(captured, handlerFailed, route, hold),
      () => void settled.then(() => hold.release()).catch((error: Error) => this.logFailure('releasing a key', error)),
    );
    const outcome = new ReplaySubject<unknown>();
    executionContext
      .run({ scope: request.scope, manager: hold.manager }, () => next.handle())
      .pipe(
        map((value) => {
          if (value instanceof StreamableFile) {
            raw.setHeader('Content-Type', PROBLEM_CONTENT_TYPE);
            throw notReplayable('a StreamableFile');
          }
          return value;
        }),
        refuseMultipleValues(raw),
        catchError((error: unknown) => {
          if (!isDatabaseUnavailable(error)) return throwError(() => error);
          this.logFailure('the handler\'s database work', error as Error);
          return throwError(() => this.storeUnavailable(raw, route, 'the database failed while handling this request; nothing was kept'));
        }),
        tap({ error: () => (handlerFailed = true) }),
        finalize(markSettled),
      )
      .subscribe(outcome);
    return outcome.asObservable();
  }

  /** Records the outcome, or releases the key, before the response leaves. */
  private async finish(
    captured: CapturedResponse,
    handlerFailed: boolean,
    route: RouteSettings,
    hold: KeyHold,
  ): Promise<ResponseReplacement | void> {
    if (!hold.isOpen) return;
    try {
      if (!route.storeResponse(captured.status)) return await hold.release();
      const tooLarge = tooLargeProblem(captured, route.maxResponseBytes);
      if (tooLarge) {
        await hold.release();
        this.logger.error(tooLarge.problem.detail);
        return problemReplacement(tooLarge.problem, this.settings.replayHeaders);
      }
      const completion = await hold.complete(toStoredResponse(captured, this.settings.replayHeaders), handlerFailed);
      if (completion !== 'lost') return;
      this.logger.warn('a lease-mode request finished after its lease was taken over; its outcome was not recorded');
      const lost = new IdempotencyProblem(
        ProblemType.KeyInUse,
        'the lease on this Idempotency-Key ended before the request finished and another request took it over; retry to get the recorded outcome',
      );
      return problemReplacement(lost.problem, this.settings.replayHeaders, { 'Retry-After': String(route.retryAfterSeconds) });
    } catch (error) {
      await hold.release().catch(() => undefined);
      this.logFailure('recording an idempotent outcome', error as Error);
      const problem = new IdempotencyProblem(
        ProblemType.StoreUnavailable,
        'the outcome could not be recorded, so nothing was kept; retry later with the same key',
      );
      return problemReplacement(problem.problem, this.settings.replayHeaders, { 'Retry-After': String(route.retryAfterSeconds) });
    }
  }

  private logFailure(what: string, error: Error): void {
    this.logger.error(`${what} failed: ${error.message}`);
  }

  private routeSettings(context: ExecutionContext): RouteSettings {
    const handler = context.getHandler();
    let route = this.routes.get(handler);
    if (!route) {
      const options = this.reflector.getAllAndOverride<IdempotentRouteOptions | undefined>(IDEMPOTENT_ROUTE, [
        handler,
        context.getClass(),
      ]);
      route = resolveRouteOptions(this.settings, options ?? {});
      this.routes.set(handler, route);
    }
    return route;
  }
}

function notReplayable(what: string): IdempotencyProblem {
  return new IdempotencyProblem(
    ProblemType.ResponseNotReplayable,
    `an @Idempotent() handler returned ${what}, whose bytes cannot be recorded and replayed; return a value instead`,
  );
}
