import { IdempotencyProblem, ProblemType } from '../problems.js';
import type { CapturedResponse } from './response-capture.js';

/**
 * The problem answered instead of a response whose body is over `maxBytes`, or `undefined` when
 * it fits. Such a response would be stored, but is not sent either: claiming success for writes
 * that cannot be recorded would let a retry run them twice.
 */
export function tooLargeProblem(captured: CapturedResponse, maxBytes: number): IdempotencyProblem | undefined {
  if (captured.body.length <= maxBytes) return undefined;
  return new IdempotencyProblem(
    ProblemType.ResponseTooLarge,
    `the response (${captured.body.length} bytes) is larger than maxResponseBytes (${maxBytes}), so it could not be ` +
      'recorded for replay and nothing was kept; return a smaller body or raise maxResponseBytes for this route',
  );
}
