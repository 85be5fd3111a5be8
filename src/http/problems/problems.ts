import { HttpException } from '@nestjs/common';
import type { Tombstone } from '../../core/run-outcome.js';
import { type MalformedKey, refusalText } from '../../key/key-header.js';
import { PROBLEMS, ProblemType } from './problem-types.js';

export { ProblemType } from './problem-types.js';

/** Whether this process lets `Error.stackTraceLimit` be set (not under frozen intrinsics). */
const stackTraceLimitWritable = (() => {
  const descriptor = Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit');
  return descriptor?.writable === true || typeof descriptor?.set === 'function';
})();

/** The media type of every problem body. */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** An RFC 9457 problem body, with a problem type's own members (`key-expired`'s times). */
export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  [member: string]: unknown;
}

/**
 * An error answered as `application/problem+json` with a stable `type`. Thrown through Nest's
 * exception layer, so the app's exception filters and interceptors see it; `headers` (such as
 * `Retry-After`) are set on the response before it leaves.
 */
export class IdempotencyProblem extends HttpException {
  readonly problem: ProblemDetails;
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    type: ProblemType,
    detail: string,
    headers: Readonly<Record<string, string>> = {},
    members?: Readonly<Record<string, unknown>>,
  ) {
    const { status, title } = PROBLEMS[type];
    const problem: ProblemDetails = { type, title, status, detail, ...members };
    // A 4xx problem is an answer to the client, not a fault of the server: its stack would name
    // only the framework's frames, and capturing it is most of what constructing one costs (a
    // storm of duplicates answered 409 builds thousands). Only its message line is kept. 5xx
    // problems keep their stack, for error trackers.
    const quiet = status < 500 && stackTraceLimitWritable;
    const stackTraceLimit = Error.stackTraceLimit;
    if (quiet) Error.stackTraceLimit = 0;
    try {
      super(problem, status);
    } finally {
      if (quiet) Error.stackTraceLimit = stackTraceLimit;
    }
    this.name = 'IdempotencyProblem';
    this.problem = problem;
    this.headers = headers;
  }
}

/** How a problem names the key of a route that reads it from the `Idempotency-Key` header. */
export const DEFAULT_KEY_NOUN = 'Idempotency-Key';

const retryAfter = (seconds: number): Record<string, string> => ({ 'Retry-After': String(seconds) });

/**
 * Every problem the module answers with, and its detail text: the one place a client-facing
 * sentence is written.
 */
export const Problems = {
  /** `format`: the route's accepted key format in words (`AcceptedKeys.text`). */
  /** `ask`: what the client must send, for a route that reads its key elsewhere than `Idempotency-Key`. */
  keyMissing: (format: string, ask = 'send an Idempotency-Key header') =>
    new IdempotencyProblem(ProblemType.KeyMissing, `${ask} (${format}) with this request`),
  keyMalformed: (why: MalformedKey, noun = DEFAULT_KEY_NOUN) =>
    new IdempotencyProblem(ProblemType.KeyMalformed, refusalText(why, noun, '')),
  keyFormat: (format: string, noun = DEFAULT_KEY_NOUN) =>
    new IdempotencyProblem(ProblemType.KeyMalformed, refusalText('format', noun, format)),
  keyInUse: (retryAfterSeconds: number) =>
    new IdempotencyProblem(
      ProblemType.KeyInUse,
      'a request with this Idempotency-Key is still being processed; retry after the Retry-After delay',
      retryAfter(retryAfterSeconds),
    ),
  leaseTakenOver: (retryAfterSeconds: number) =>
    new IdempotencyProblem(
      ProblemType.KeyInUse,
      'the lease on this Idempotency-Key ended before the request finished and another request took it over; retry to get the recorded outcome',
      retryAfter(retryAfterSeconds),
    ),
  keyReused: () =>
    new IdempotencyProblem(
      ProblemType.KeyReused,
      'this Idempotency-Key was already used with a different request payload; use a new key for a new request',
    ),
  /**
   * A retry after the key's ttl met its tombstone: the request completed long ago and ran nothing
   * now; its times and recorded status are members of the problem.
   */
  keyExpired: (tombstone: Tombstone, headers: Readonly<Record<string, string>> = {}) =>
    new IdempotencyProblem(
      ProblemType.KeyExpired,
      `this Idempotency-Key completed at ${tombstone.completedAt.toISOString()} (status ${tombstone.status}); ` +
        `its response was kept until ${tombstone.responseExpiredAt.toISOString()} and is gone, so it cannot be replayed, ` +
        'and the request was not run again',
      headers,
      tombstoneMembers(tombstone),
    ),
  callerUnidentified: () =>
    new IdempotencyProblem(
      ProblemType.CallerUnidentified,
      'idempotent requests must be authenticated, so that a stored response is only ever replayed to its caller ' +
        "(the server found no caller: an authentication guard sets request.user, the module's caller option reads " +
        "another, or anonymousCallers: 'shared' lets every unauthenticated client share one scope)",
    ),
  callerUnstorable: (maxBytes: number) =>
    new IdempotencyProblem(
      ProblemType.CallerUnidentified,
      `the caller id resolved for this request cannot scope a key: it must be at most ${maxBytes} bytes of UTF-8, without NUL characters or unpaired surrogates`,
    ),
  endpointTooLong: (maxLength: number) =>
    new IdempotencyProblem(
      ProblemType.EndpointTooLong,
      `idempotent request paths are limited to ${maxLength} characters`,
    ),
  bodyNotParsed: () =>
    new IdempotencyProblem(
      ProblemType.BodyNotParsed,
      'this request has a body no parser had read when its Idempotency-Key was checked, so a retry with another payload could not be told apart: ' +
        'send JSON or a URL-encoded form, or give the route a fingerprint function',
    ),
  bodyTooDeep: (maxDepth: number) =>
    new IdempotencyProblem(
      ProblemType.BodyTooDeep,
      `request bodies of idempotent routes may nest at most ${maxDepth} levels deep`,
    ),
  /** The 503 of database trouble: nothing was kept, retry after `retryAfterSeconds`. */
  storeUnavailable: (
    when: 'reserving' | 'handling' | 'recording' | 'recording-after-effects',
    retryAfterSeconds: number,
  ) =>
    new IdempotencyProblem(
      ProblemType.StoreUnavailable,
      `${UNAVAILABLE[when]}; retry later with the same key`,
      retryAfter(retryAfterSeconds),
    ),
  /** The key table does not exist (a migration not run): nothing ran, and no retry helps until it does. */
  storeNotMigrated: () =>
    new IdempotencyProblem(
      ProblemType.StoreNotMigrated,
      "the server's idempotency table has not been created, so nothing was run; this is the server's setup, not " +
        'the request: a retry fails the same way until the migration is run',
    ),
  /** The drain began: no key is taken here any more; the connection is closed, so a retry goes to another instance. */
  shuttingDown: (retryAfterSeconds: number) =>
    new IdempotencyProblem(
      ProblemType.ShuttingDown,
      'this instance is shutting down and takes no new Idempotency-Key; nothing was run: retry with the same key (another instance answers)',
      { ...retryAfter(retryAfterSeconds), Connection: 'close' },
    ),
  /** A completed key whose sealed outcome cannot be opened: neither replayed nor run again. */
  outcomeUnreadable: (retryAfterSeconds: number) =>
    new IdempotencyProblem(
      ProblemType.OutcomeUnreadable,
      'this Idempotency-Key has completed, but its recorded outcome cannot be read back, so it was neither replayed nor run again; retry later with the same key',
      retryAfter(retryAfterSeconds),
    ),
  /** The database refused the key's transaction itself: a retry fails the same way. */
  outcomeRefused: (mode: 'transactional' | 'lease') =>
    new IdempotencyProblem(
      ProblemType.OutcomeNotRecorded,
      `${UNAVAILABLE[mode === 'lease' ? 'recording-after-effects' : 'recording']}: the database refused the transaction`,
    ),
  notReplayable: (what: 'a StreamableFile') =>
    new IdempotencyProblem(
      ProblemType.ResponseNotReplayable,
      `an @Idempotent() handler returned ${what}, whose bytes cannot be recorded and replayed; return a value instead`,
    ),
  severalValues: () =>
    new IdempotencyProblem(
      ProblemType.ResponseNotReplayable,
      'an @Idempotent() handler returned an Observable that emitted more than one value, which has no single ' +
        'response to record and replay; return one value (a Promise, or an Observable of one value) instead',
    ),
  tooLarge: (bytes: number, maxBytes: number) =>
    new IdempotencyProblem(
      ProblemType.ResponseTooLarge,
      `the response (${bytes} bytes) is larger than maxResponseBytes (${maxBytes}), so it could not be ` +
        'recorded for replay and nothing was kept; return a smaller body or raise maxResponseBytes for this route',
    ),
  failedAfterAnswer: () =>
    new IdempotencyProblem(
      ProblemType.HandlerFailedAfterAnswer,
      'the handler failed after it had sent its answer, so that answer was withdrawn and nothing was recorded; a retry runs the request again',
    ),
  runTwice: () =>
    new IdempotencyProblem(
      ProblemType.HandlerRunTwice,
      'the handler of this @Idempotent() request was started a second time (an interceptor retried it); it runs once per request, so the retry was refused and nothing is kept',
    ),
} as const;

/** What a tombstone tells, as members of the answer that meets it. */
export function tombstoneMembers({ completedAt, responseExpiredAt, expiresAt, status }: Tombstone) {
  return {
    completedAt: completedAt.toISOString(),
    responseExpiredAt: responseExpiredAt.toISOString(),
    keyExpiresAt: expiresAt.toISOString(),
    recordedStatus: status,
  };
}

const UNAVAILABLE = {
  reserving: 'the idempotency store cannot be reached',
  handling: 'the database failed while handling this request; nothing was kept',
  recording: 'the outcome could not be recorded, so nothing was kept',
  'recording-after-effects':
    "the outcome could not be recorded; the handler's work was done, and a retry may run it again",
} as const;
