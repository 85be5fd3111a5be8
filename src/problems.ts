import { HttpException } from '@nestjs/common';

/** The stable `type` URI of every problem this module answers with (RFC 9457). */
export enum ProblemType {
  KeyMissing = 'urn:nestjs-pg-idempotency:key-missing',
  KeyMalformed = 'urn:nestjs-pg-idempotency:key-malformed',
  KeyInUse = 'urn:nestjs-pg-idempotency:key-in-use',
  KeyReused = 'urn:nestjs-pg-idempotency:key-reused',
  CallerUnidentified = 'urn:nestjs-pg-idempotency:caller-unidentified',
  EndpointTooLong = 'urn:nestjs-pg-idempotency:endpoint-too-long',
  BodyTooDeep = 'urn:nestjs-pg-idempotency:body-too-deep',
  BodyNotParsed = 'urn:nestjs-pg-idempotency:body-not-parsed',
  StoreUnavailable = 'urn:nestjs-pg-idempotency:store-unavailable',
  ResponseNotReplayable = 'urn:nestjs-pg-idempotency:response-not-replayable',
  ResponseTooLarge = 'urn:nestjs-pg-idempotency:response-too-large',
  HandlerFailedAfterAnswer = 'urn:nestjs-pg-idempotency:handler-failed-after-answer',
  HandlerRunTwice = 'urn:nestjs-pg-idempotency:handler-run-twice',
  OutcomeNotRecorded = 'urn:nestjs-pg-idempotency:outcome-not-recorded',
}

const PROBLEMS: Record<ProblemType, { status: number; title: string }> = {
  [ProblemType.KeyMissing]: { status: 400, title: 'Idempotency-Key header required' },
  [ProblemType.KeyMalformed]: { status: 400, title: 'Idempotency-Key header malformed' },
  [ProblemType.KeyInUse]: { status: 409, title: 'A request with this Idempotency-Key is in progress' },
  [ProblemType.KeyReused]: { status: 422, title: 'Idempotency-Key reused with a different request' },
  [ProblemType.CallerUnidentified]: { status: 401, title: 'Caller not identified' },
  [ProblemType.EndpointTooLong]: { status: 414, title: 'Request path too long for an idempotent request' },
  [ProblemType.BodyTooDeep]: { status: 400, title: 'Request body nested too deeply' },
  [ProblemType.BodyNotParsed]: { status: 415, title: 'Request body not parsed, so it cannot be fingerprinted' },
  [ProblemType.StoreUnavailable]: { status: 503, title: 'Idempotency store unavailable' },
  [ProblemType.ResponseNotReplayable]: { status: 500, title: 'Response cannot be replayed' },
  [ProblemType.ResponseTooLarge]: { status: 500, title: 'Response too large to be recorded' },
  [ProblemType.HandlerFailedAfterAnswer]: { status: 500, title: 'Handler failed after sending its answer' },
  [ProblemType.HandlerRunTwice]: { status: 500, title: 'Handler started twice for one request' },
  [ProblemType.OutcomeNotRecorded]: { status: 500, title: 'Outcome could not be recorded' },
};

/** Whether this process lets `Error.stackTraceLimit` be set (not under frozen intrinsics). */
const stackTraceLimitWritable = (() => {
  const descriptor = Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit');
  return descriptor?.writable === true || typeof descriptor?.set === 'function';
})();

/** The media type of every problem body. */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** An RFC 9457 problem body. */
export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
}

/**
 * An error answered as `application/problem+json` with a stable `type`. Thrown through Nest's
 * exception layer, so the app's exception filters and interceptors see it; `headers` (such as
 * `Retry-After`) are set on the response before it leaves.
 */
export class IdempotencyProblem extends HttpException {
  readonly problem: ProblemDetails;
  readonly headers: Readonly<Record<string, string>>;

  constructor(type: ProblemType, detail: string, headers: Readonly<Record<string, string>> = {}) {
    const { status, title } = PROBLEMS[type];
    const problem = { type, title, status, detail };
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
