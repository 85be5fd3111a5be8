import type { ServerResponse } from 'node:http';
import type { IdempotencyProblem } from '../problems.js';
import { PROBLEM_CONTENT_TYPE } from '../problems.js';

/** Sets a problem's media type and headers (such as Retry-After) on the response; returns it. */
export function withProblemHeaders(raw: ServerResponse, problem: IdempotencyProblem): IdempotencyProblem {
  raw.setHeader('Content-Type', PROBLEM_CONTENT_TYPE);
  for (const [name, value] of Object.entries(problem.headers)) raw.setHeader(name, value);
  return problem;
}
