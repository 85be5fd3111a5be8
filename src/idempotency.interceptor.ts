import { type CallHandler, type ExecutionContext, Inject, Injectable, Logger, type NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Observable, of } from 'rxjs';
import { IdempotencyEvents } from './events/idempotency-events.js';
import { IDEMPOTENCY_SETTINGS, IDEMPOTENT_ROUTE } from './idempotency.constants.js';
import {
  type IdempotencySettings,
  type IdempotentRouteOptions,
  resolveRouteOptions,
  type RouteSettings,
} from './idempotency.options.js';
import { type IdempotentRequest, readIdempotentRequest } from './key/idempotent-request.js';
import { IdempotencyProblem, ProblemType } from './problems.js';
import { storeUnavailable, withProblemHeaders } from './response/problem-headers.js';
import { replaceResponse } from './response/response-capture.js';
import { replayOf } from './response/stored-response.js';
import { HeldKeyRun } from './run/held-key-run.js';
import { IdempotencyStore } from './store/idempotency.store.js';
import type { Reservation } from './store/reservation.js';

/** Marks a request this interceptor already handles, with how it handles it (see `Handling`). */
const HANDLED = Symbol('nestjs-pg-idempotency:handled');

/**
 * How the interceptor handles a request, for when it is entered again for the same request (it
 * sits in one chain more than once: registered globally and by `@Idempotent()`, or on the class
 * and on the method; or an outer interceptor subscribes to the chain again):
 * - `passing` (no key on an optional route): pass on;
 * - `running` (the handler runs with its key held): entered from inside that run, before the
 *   handler settled, it is the same chain passing through again: pass on; entered from anywhere
 *   else, the handler is being run a second time for one request (an outer interceptor's
 *   `retry()`): refused, since that run would be outside the key's transaction and hold;
 * - `answered` (a 409, a 503, a replay: the handler never ran): the whole pipeline runs again, as
 *   for a retry from the client.
 */
type Handling = { kind: 'passing' } | { kind: 'running'; run: HeldKeyRun } | { kind: 'answered' };

/**
 * The request pipeline of an `@Idempotent()` route: parse → reserve → run or replay → record.
 * The outcome is captured where the platform writes it, after every serializer, interceptor and
 * exception filter, and recorded (or the key released) before the response leaves.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  private readonly logger = new Logger('Idempotency');
  /**
   * Each route's settings, by controller class and then handler: an inherited handler is one
   * function for every subclass, each of which may mark it differently.
   */
  private readonly routes = new WeakMap<object, WeakMap<object, RouteSettings | null>>();

  constructor(
    @Inject(IDEMPOTENCY_SETTINGS) private readonly settings: IdempotencySettings,
    private readonly store: IdempotencyStore,
    private readonly reflector: Reflector,
    private readonly events: IdempotencyEvents,
  ) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    if (context.getType() !== 'http') return next.handle();
    const request = context.switchToHttp().getRequest();
    const response = context.switchToHttp().getResponse();
    const raw: ServerResponse = response.raw ?? response;
    const route = this.routeSettings(context);
    // Registered globally (APP_INTERCEPTOR), it meets every route: those without @Idempotent() pass.
    if (!route) return next.handle();
    const handled: Handling | undefined = request[HANDLED];
    if (handled?.kind === 'passing') return next.handle();
    if (handled?.kind === 'running') {
      if (handled.run.isEnteredFromWithin()) return next.handle();
      throw withProblemHeaders(
        raw,
        new IdempotencyProblem(
          ProblemType.HandlerRunTwice,
          'the handler of this @Idempotent() request was started a second time (an interceptor retried it); it runs once per request, so the retry was refused and nothing is kept',
        ),
      );
    }
    request[HANDLED] = { kind: 'answered' } satisfies Handling;
    try {
      const idempotent = readIdempotentRequest(context, this.settings, route);
      if (!idempotent) {
        request[HANDLED] = { kind: 'passing' } satisfies Handling;
        return next.handle();
      }
      let reservation = await this.reserve(raw, idempotent, route);
      if (reservation.kind === 'in-progress' && route.waitMs > 0) reservation = await this.awaitTurn(raw, idempotent, route, reservation);
      switch (reservation.kind) {
        case 'held': {
          const run = new HeldKeyRun(this.settings, this.events, route, reservation.hold);
          request[HANDLED] = { kind: 'running', run } satisfies Handling;
          return run.start(next, raw, idempotent);
        }
        case 'completed':
          this.events.emit({ type: 'replayed', handler: route.handler, status: reservation.response.status });
          replaceResponse(raw, replayOf(reservation.response, this.settings.replayHeaders));
          return of(undefined);
        case 'mismatch':
          this.events.emit({ type: 'mismatch', handler: route.handler });
          throw new IdempotencyProblem(
            ProblemType.KeyReused,
            'this Idempotency-Key was already used with a different request payload; use a new key for a new request',
          );
        case 'in-progress':
          this.events.emit({ type: 'in-progress', handler: route.handler });
          throw new IdempotencyProblem(
            ProblemType.KeyInUse,
            'a request with this Idempotency-Key is still being processed; retry after the Retry-After delay',
            { 'Retry-After': String(reservation.retryAfterSeconds ?? route.retryAfterSeconds) },
          );
      }
    } catch (error) {
      throw error instanceof IdempotencyProblem ? withProblemHeaders(raw, error) : error;
    }
  }

  private async reserve(raw: ServerResponse, request: IdempotentRequest, route: RouteSettings): Promise<Reservation> {
    const key = { ...request, ttlMs: route.ttlMs };
    try {
      return route.mode === 'lease'
        ? await this.store.reserveLease(key, route.leaseMs, route.renewLease)
        : await this.store.reserve(key);
    } catch (error) {
      this.logFailure('reserving an idempotency key', error as Error);
      throw storeUnavailable('the idempotency store cannot be reached', route.retryAfterSeconds);
    }
  }

  /**
   * Wait mode: asks again, with a growing, jittered pause (50 ms to 500 ms) and no connection
   * held in between, until the key is no longer in progress or `route.waitMs` has passed.
   */
  private async awaitTurn(raw: ServerResponse, request: IdempotentRequest, route: RouteSettings, first: Reservation): Promise<Reservation> {
    const deadline = Date.now() + route.waitMs;
    let pause = 50;
    let last = first;
    for (;;) {
      const left = deadline - Date.now();
      // Past the wait, the last answer stands, with its Retry-After (a lease's seconds left).
      if (left <= 0) return last;
      await sleep(Math.min(left, pause / 2 + Math.random() * pause));
      pause = Math.min(pause * 2, 500);
      last = await this.reserve(raw, request, route);
      if (last.kind !== 'in-progress') return last;
    }
  }

  private logFailure(what: string, error: Error): void {
    this.logger.error(`${what} failed: ${error.message}`);
  }

  /** The route's settings; `undefined` for a route without `@Idempotent()`. */
  private routeSettings(context: ExecutionContext): RouteSettings | undefined {
    const handler = context.getHandler();
    const controller = context.getClass();
    let routes = this.routes.get(controller);
    if (!routes) this.routes.set(controller, (routes = new WeakMap()));
    let route = routes.get(handler);
    if (route === undefined) {
      const options = this.reflector.getAllAndOverride<IdempotentRouteOptions | undefined>(IDEMPOTENT_ROUTE, [handler, controller]);
      route = options === undefined ? null : resolveRouteOptions(this.settings, options, `${controller.name}.${handler.name}`, controller);
      routes.set(handler, route);
    }
    return route ?? undefined;
  }
}
