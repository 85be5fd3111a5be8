import {
  type CallHandler,
  type ExecutionContext,
  Inject,
  Injectable,
  Logger,
  type NestInterceptor,
} from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { type Observable, of } from 'rxjs';
import { IdempotencyEvents } from '../observe/events/idempotency-events.js';
import { ShuttingDownError } from '../core/key-drain.js';
import { DatabaseHost } from '../hosts/database-host.js';
import { IDEMPOTENCY_SETTINGS } from '../idempotency.constants.js';
import { IdempotentRoutes } from './idempotent-routes.js';
import type { IdempotencySettings, RouteSettings } from '../options/settings.js';
import { readIdempotentRequest } from './parse/idempotent-request.js';
import type { IdempotentRequest } from '../key/idempotent-request.js';
import { IdempotencyProblem, Problems } from './problems.js';
import { OutcomeRecorder } from './run/outcome-recorder.js';
import { KeyReserver } from '../core/reserve/key-reserver.js';
import type { Reservation } from '../core/reserve/reservation.js';
import { RetryAfterEstimate } from './retry-after.js';
import { IdempotencyTelemetry, type TracedOutcome } from '../observe/telemetry/idempotency-telemetry.js';
import { awaitTurn } from './wait-mode.js';
import { withProblemHeaders } from './response/problem-headers.js';
import { replaceResponse } from './response/response-capture.js';
import { replayOf } from './response/replay.js';
import { KeyRun } from './run/key-run.js';
import { UnreadableOutcomeError } from '../store/protect/unreadable-outcome.error.js';
import { TablesNotMigratedError } from '../store/table/tables-not-migrated.error.js';

/** The outcome a reservation settles, on its span; a held key's comes with its record. */
const RESERVED: Record<Reservation['kind'], TracedOutcome | undefined> = {
  held: undefined,
  completed: 'replayed',
  mismatch: 'mismatch',
  'in-progress': 'conflict',
};

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
  private readonly logger = new Logger('Idempotency');

  constructor(
    @Inject(IDEMPOTENCY_SETTINGS) private readonly settings: IdempotencySettings,
    private readonly routes: IdempotentRoutes,
    private readonly reserver: KeyReserver,
    private readonly events: IdempotencyEvents,
    @Inject(DatabaseHost) private readonly host: DatabaseHost,
    private readonly retryAfter: RetryAfterEstimate,
    private readonly telemetry: IdempotencyTelemetry,
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
      const reservation = this.rememberedTraced(idempotent, route) ?? (await this.reserveTraced(idempotent, route));
      switch (reservation.kind) {
        case 'held': {
          const recorder = new OutcomeRecorder(this.settings, this.events, route, reservation.hold, this.telemetry);
          const run = new KeyRun(route, recorder, idempotent, (error) => this.host.failureOf(error), this.telemetry);
          request[HANDLED] = { kind: 'running', run } satisfies Handling;
          return run.start(next, raw);
        }
        case 'completed': {
          const span = this.telemetry.start('replay', route.handler, route.mode);
          this.events.emit({ type: 'replayed', handler: route.handler, status: reservation.response.status });
          replaceResponse(raw, replayOf(reservation.response, this.settings.replayHeaders));
          this.telemetry.end(span, 'replayed');
          return of(undefined);
        }
        case 'mismatch':
          this.events.emit({ type: 'mismatch', handler: route.handler });
          throw Problems.keyReused();
        case 'in-progress':
          this.events.emit({ type: 'in-progress', handler: route.handler });
          throw Problems.keyInUse(
            reservation.retryAfterSeconds ?? this.retryAfter.seconds(route.handler, route.retryAfterSeconds),
          );
      }
    } catch (error) {
      throw error instanceof IdempotencyProblem ? withProblemHeaders(raw, error, route.problemLink) : error;
    }
  }

  /** What `KeyReserver.remembered()` answers at once, in its own `idempotency.reserve` span. */
  private rememberedTraced(idempotent: IdempotentRequest, route: RouteSettings): Reservation | undefined {
    const remembered = this.reserver.remembered(idempotent);
    if (!remembered) return undefined;
    this.telemetry.end(this.telemetry.start('reserve', route.handler, route.mode), RESERVED[remembered.kind]);
    return remembered;
  }

  /**
   * The key reserved, in the `idempotency.reserve` span, and in wait mode waited for while another
   * request holds it.
   */
  private async reserveTraced(idempotent: IdempotentRequest, route: RouteSettings): Promise<Reservation> {
    const span = this.telemetry.start('reserve', route.handler, route.mode);
    let reservation: Reservation;
    try {
      reservation = await this.reserve(idempotent, route);
      if (reservation.kind === 'in-progress' && route.waitMs > 0) {
        reservation = await awaitTurn(() => this.reserve(idempotent, route), route.waitMs, reservation);
      }
    } catch (error) {
      this.telemetry.end(span, 'refused', (error as Error).message);
      throw error;
    }
    this.telemetry.end(span, RESERVED[reservation.kind]);
    return reservation;
  }

  private async reserve(request: IdempotentRequest, route: RouteSettings): Promise<Reservation> {
    try {
      return await this.reserver.reserve(request, route);
    } catch (error) {
      if (error instanceof ShuttingDownError) {
        this.events.emit({ type: 'refused', handler: route.handler, reason: 'shutting-down' });
        throw Problems.shuttingDown(route.retryAfterSeconds);
      }
      if (error instanceof UnreadableOutcomeError) {
        this.events.emit({ type: 'refused', handler: route.handler, reason: 'outcome-unreadable' });
        this.logger.error(`${route.handler}: ${error.message}; the request was answered 503 and nothing ran`);
        throw Problems.outcomeUnreadable(route.retryAfterSeconds);
      }
      if (error instanceof TablesNotMigratedError) {
        this.events.emit({ type: 'refused', handler: route.handler, reason: 'not-migrated' });
        this.logger.error(`${route.handler}: ${error.message}; the request was answered 500 and nothing ran`);
        throw Problems.storeNotMigrated();
      }
      this.events.emit({ type: 'refused', handler: route.handler, reason: 'store-unavailable' });
      this.logger.error(`reserving an idempotency key failed: ${(error as Error).message}`);
      throw Problems.storeUnavailable('reserving', route.retryAfterSeconds);
    }
  }
}
