import type { ServerResponse } from 'node:http';
import { IdempotencyProblem, PROBLEM_CONTENT_TYPE, ProblemType } from '../problems.js';

/** Sets a problem's media type and headers (such as Retry-After) on the response; returns it. */
export function withProblemHeaders(raw: ServerResponse, problem: IdempotencyProblem): IdempotencyProblem {
  raw.setHeader('Content-Type', PROBLEM_CONTENT_TYPE);
  for (const [name, value] of Object.entries(problem.headers)) raw.setHeader(name, value);
  return problem;
}

/** The 503 of database trouble: nothing was kept, retry after `retryAfterSeconds`. */
export function storeUnavailable(detail: string, retryAfterSeconds: number): IdempotencyProblem {
  return new IdempotencyProblem(ProblemType.StoreUnavailable, `${detail}; retry later with the same key`, {
    'Retry-After': String(retryAfterSeconds),
  });
}
