import { AssertionError } from 'node:assert';
import type { ConformanceReport } from './conformance-target.js';

/**
 * Thrown by `checkIdempotentRoute()` when the route broke a promise of the module: an assertion
 * error (Jest, Vitest and `node:test` report it as a failed test) whose message lists each failed
 * check and why; `report` holds every check.
 */
export class IdempotencyConformanceError extends AssertionError {
  readonly report: ConformanceReport;

  constructor(report: ConformanceReport) {
    const failed = report.checks.filter((check) => !check.passed);
    super({
      message:
        `${report.url}: ${failed.length} of ${report.checks.length} idempotency checks failed\n` +
        failed.map((check) => `- ${check.name}:\n    ${check.failures.join('\n    ')}`).join('\n'),
    });
    this.name = 'IdempotencyConformanceError';
    this.report = report;
  }
}
