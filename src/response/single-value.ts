import type { ServerResponse } from 'node:http';
import { IdempotencyProblem, PROBLEM_CONTENT_TYPE, ProblemType } from '../problems.js';

/**
 * The 500 `response-not-replayable` problem of a handler whose Observable emitted a second
 * value: it has no single response to record, so it is refused before anything is stored and
 * its writes roll back with the key. Sets the problem's media type on `raw`.
 */
export function multipleValuesProblem(raw: ServerResponse): IdempotencyProblem {
  raw.setHeader('Content-Type', PROBLEM_CONTENT_TYPE);
  return new IdempotencyProblem(
    ProblemType.ResponseNotReplayable,
    'an @Idempotent() handler returned an Observable that emitted more than one value, which has no single ' +
      'response to record and replay; return one value (a Promise, or an Observable of one value) instead',
  );
}
