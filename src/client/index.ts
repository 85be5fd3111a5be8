/**
 * `nestjs-pg-idempotency/client`: a fetch-based client that retries unsafe requests safely with
 * an Idempotency-Key. No NestJS dependency; Node.js ≥ 20 and browsers.
 */
export {
  IdempotentClient,
  type IdempotentClientOptions,
  type IdempotentRequestInit,
  type IdempotentResult,
  idempotentFetch,
  type RetryInfo,
} from './idempotent-client.js';
export { IdempotentRequestError } from './idempotent-request.error.js';
export { backoffDelayMs, retryAfterMs } from './backoff.js';
export { uuidv7 } from './uuidv7.js';
