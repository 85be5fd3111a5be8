/**
 * `nestjs-pg-idempotency/testing`: a conformance kit a team points at its own running app and
 * route (any host), from Jest, Vitest or `node:test`: `checkIdempotentRoute(target)`. No NestJS
 * dependency.
 */
export { checkIdempotentRoute } from './check-idempotent-route.js';
export { IdempotencyConformanceError } from './conformance-error.js';
export type {
  ConformanceCheck,
  ConformanceReport,
  ConformanceRequest,
  ConformanceTarget,
} from './conformance-target.js';
