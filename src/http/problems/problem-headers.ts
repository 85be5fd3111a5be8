import type { ServerResponse } from 'node:http';
import type { IdempotencyProblem } from './problems.js';
import { PROBLEM_CONTENT_TYPE } from './problems.js';

/**
 * A problem's headers (such as Retry-After), with the `Link` to the API's documentation of its
 * problems when the module has one (`problemDocumentation`).
 */
export function problemHeaders(problem: IdempotencyProblem, link: string | undefined): Record<string, string> {
  return link === undefined ? { ...problem.headers } : { ...problem.headers, Link: link };
}

/** Sets a problem's media type and headers on the response; returns it. */
export function withProblemHeaders(
  raw: ServerResponse,
  problem: IdempotencyProblem,
  link: string | undefined,
): IdempotencyProblem {
  raw.setHeader('Content-Type', PROBLEM_CONTENT_TYPE);
  for (const [name, value] of Object.entries(problemHeaders(problem, link))) raw.setHeader(name, value);
  return problem;
}
