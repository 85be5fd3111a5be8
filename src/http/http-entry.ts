import { type CallHandler, type ExecutionContext, Inject, Injectable, type NestInterceptor } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { type Observable, of } from 'rxjs';
import { ExactlyOnce, type Reserved } from '../core/exactly-once.js';
import type { UnavailableReason } from '../core/run-outcome.js';
import { DatabaseHost } from '../hosts/database-host.js';
import { IDEMPOTENCY_SETTINGS } from '../idempotency.constants.js';
import type { IdempotencySettings, RouteSettings } from '../options/settings.js';
import { IdempotentRoutes } from './idempotent-routes.js';
import { readIdempotentRequest } from './parse/idempotent-request.js';
import { IdempotencyProblem, Problems } from './problems/problems.js';
import { withProblemHeaders } from './problems/problem-headers.js';
import { expiryHeaders, replayOf, tombstoneAcknowledgement } from './response/replay.js';
import { replaceResponse } from './response/response-capture.js';
import { RetryAfterEstimate } from './retry-after.js';
import { KeyRun } from './run/key-run.js';
import { OutcomeRecorder } from './run/outcome-recorder.js';

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
type Handling = { kind: 'passing' } | { kind: 'running'; run: KeyRun } | { kind: 'answered' };

/**
 * The HTTP entry, the pipeline of an `@Idempotent()` route: parse → reserve → run, replay or refuse.
 * The outcome is captured where the platform writes it, after every serializer, interceptor and
 * exception filter, and recorded (or the key released) before the response leaves.
 */
@Injectable()
export class HttpEntry implements NestInterceptor {
  constructor(
    @Inject(IDEMPOTENCY_SETTINGS) private readonly settings: IdempotencySettings,
    private readonly routes: IdempotentRoutes,
    private readonly core: ExactlyOnce,
    @Inject(DatabaseHost) private readonly host: DatabaseHost,
    private readonly retryAfter: RetryAfterEstimate,
  ) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    if (context.getType() !== 'http') return next.handle();
    // Registered globally (APP_INTERCEPTOR), it meets every route: those without @Idempotent() pass.
    const route = this.routes.of(context.getClass(), context.getHandler());
    if (!route) return next.handle();
    // An HTTP context's arguments are the request and the response (what switchToHttp() reads).
    const request = context.getArgByIndex(0);
    const response = context.getArgByIndex(1);
    const raw: ServerResponse = response.raw ?? response;
    const handled: Handling | undefined = request[HANDLED];
    if (handled?.kind === 'passing') return next.handle();
    if (handled?.kind === 'running') {
      if (handled.run.isEnteredFromWithin()) return next.handle();
      throw withProblemHeaders(raw, Problems.runTwice(), route.problemLink);
    }
    request[HANDLED] = { kind: 'answered' } satisfies Handling;
    try {
      const idempotent = readIdempotentRequest(context, this.settings, route);
      if (!idempotent) {
        request[HANDLED] = { kind: 'passing' } satisfies Handling;
        return next.handle();
      }
      const reserved: Reserved =
        this.core.remembered(idempotent, route) ?? (await this.core.reserve(idempotent, route));
      switch (reserved.kind) {
        case 'held': {
          const recorder = new OutcomeRecorder(this.settings, route, reserved.run);
          const run = new KeyRun(route, recorder, (error) => this.host.failureOf(error));
          request[HANDLED] = { kind: 'running', run } satisfies Handling;
          return run.start(next, raw);
        }
        case 'completed':
          replaceResponse(raw, replayOf(reserved.response, this.settings.replayHeaders));
          return of(undefined);
        case 'mismatch':
          throw Problems.keyReused();
        case 'tombstone':
          // A provider's delivery that succeeded is acknowledged; one that was refused stays refused.
          if (route.namedCaller && reserved.tombstone.status >= 200 && reserved.tombstone.status < 300) {
            replaceResponse(raw, tombstoneAcknowledgement(reserved.tombstone, route, this.settings.replayHeaders));
            return of(undefined);
          }
          throw Problems.keyExpired(reserved.tombstone, expiryHeaders(reserved.tombstone, route));
        case 'in-progress':
          throw Problems.keyInUse(
            reserved.retryAfterSeconds ?? this.retryAfter.seconds(route.handler, route.retryAfterSeconds),
          );
        case 'unavailable':
          throw refusal(reserved.reason, route);
      }
    } catch (error) {
      throw error instanceof IdempotencyProblem ? withProblemHeaders(raw, error, route.problemLink) : error;
    }
  }
}

/** The problem that answers a key not taken: 503 to retry later, but a missing key table's 500. */
function refusal(reason: UnavailableReason, route: RouteSettings): IdempotencyProblem {
  switch (reason) {
    case 'shutting-down':
      return Problems.shuttingDown(route.retryAfterSeconds);
    case 'outcome-unreadable':
      return Problems.outcomeUnreadable(route.retryAfterSeconds);
    case 'not-migrated':
      return Problems.storeNotMigrated();
    case 'store':
      return Problems.storeUnavailable('reserving', route.retryAfterSeconds);
  }
}
