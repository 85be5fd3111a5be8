import type { ServerResponse } from 'node:http';
import { map, type MonoTypeOperatorFunction } from 'rxjs';
import { IdempotencyProblem, PROBLEM_CONTENT_TYPE, ProblemType } from '../problems.js';

/**
 * Lets a handler's first value through and fails on a second one with a 500
 * `response-not-replayable` problem, unsubscribing from the handler's Observable (so an endless
 * one stops at once). An Observable that emits several values has no single response to
 * record; it is refused before anything is stored and its writes roll back with the key.
 */
export function refuseMultipleValues<T>(raw: ServerResponse): MonoTypeOperatorFunction<T> {
  return map((value, index) => {
    if (index === 0) return value;
    raw.setHeader('Content-Type', PROBLEM_CONTENT_TYPE);
    throw new IdempotencyProblem(
      ProblemType.ResponseNotReplayable,
      'an @Idempotent() handler returned an Observable that emitted more than one value, which has no single ' +
        'response to record and replay; return one value (a Promise, or an Observable of one value) instead',
    );
  });
}
