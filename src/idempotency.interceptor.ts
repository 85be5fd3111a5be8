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
import { finalize, map, type Observable, of, ReplaySubject, tap } from 'rxjs';
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
import type { KeyTransaction } from './store/key-transaction.js';
import type { Reservation } from './store/reservation.js';
import { transactionContext } from './transaction/transaction-context.js';

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
      const reservation = await this.reserve(idempotent, route);
      switch (reservation.kind) {
        case 'reserved':
          return this.execute(next, raw, idempotent, route, reservation.transaction);
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
            { 'Retry-After': String(route.retryAfterSeconds) },
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

  private async reserve(request: IdempotentRequest, route: RouteSettings): Promise<Reservation> {
    try {
      return await this.store.reserve(request.scope, request.fingerprint, route.ttlMs);
    } catch (error) {
      this.logger.error(`reserving an idempotency key failed: ${(error as Error).message}`);
      throw new IdempotencyProblem(ProblemType.StoreUnavailable, 'the idempotency store cannot be reached; retry later with the same key');
    }
  }

  /**
   * Runs the handler inside the key's transaction. The handler's Observable is subscribed here,
   * not only by Nest, so that a client that goes away mid-request still lets the transaction
   * end (rolled back) once the handler is done with it.
   */
  private execute(
    next: CallHandler,
    raw: ServerResponse,
    request: IdempotentRequest,
    route: RouteSettings,
    transaction: KeyTransaction,
  ): Observable<unknown> {
    let handlerFailed = false;
    let markSettled!: () => void;
    const settled = new Promise<void>((resolve) => (markSettled = resolve));
    captureResponse(
      raw,
      (captured) => this.finish(captured, handlerFailed, request, route, transaction),
      () => void settled.then(() => transaction.rollback()),
    );
    const outcome = new ReplaySubject<unknown>();
    transactionContext
      .run(transaction.manager, () => next.handle())
      .pipe(
        map((value) => {
          if (value instanceof StreamableFile) {
            raw.setHeader('Content-Type', PROBLEM_CONTENT_TYPE);
            throw notReplayable('a StreamableFile');
          }
          return value;
        }),
        refuseMultipleValues(raw),
        tap({ error: () => (handlerFailed = true) }),
        finalize(markSettled),
      )
      .subscribe(outcome);
    return outcome.asObservable();
  }

  /** Records the outcome and commits, or releases the key, before the response leaves. */
  private async finish(
    captured: CapturedResponse,
    handlerFailed: boolean,
    request: IdempotentRequest,
    route: RouteSettings,
    transaction: KeyTransaction,
  ): Promise<ResponseReplacement | void> {
    if (!transaction.isOpen) return;
    try {
      if (!route.storeResponse(captured.status)) return await transaction.rollback();
      const tooLarge = tooLargeProblem(captured, route.maxResponseBytes);
      if (tooLarge) {
        await transaction.rollback();
        this.logger.error(`${request.scope.endpoint}: ${tooLarge.problem.detail}`);
        return problemReplacement(tooLarge.problem, this.settings.replayHeaders);
      }
      const stored = toStoredResponse(captured, this.settings.replayHeaders);
      if (!handlerFailed) return await transaction.complete(stored);
      // The handler threw a deterministic error: its writes are undone, its answer is kept.
      await transaction.rollback();
      await this.store.record(request.scope, request.fingerprint, route.ttlMs, stored);
    } catch (error) {
      await transaction.rollback();
      this.logger.error(`recording an idempotent outcome failed: ${(error as Error).message}`);
      const problem = new IdempotencyProblem(
        ProblemType.StoreUnavailable,
        'the outcome could not be recorded, so nothing was kept; retry later with the same key',
      );
      return problemReplacement(problem.problem, this.settings.replayHeaders);
    }
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
