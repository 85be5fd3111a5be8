/**
 * `nestjs-pg-idempotency/terminus`: a health indicator for the key store. Needs
 * `@nestjs/terminus` (an optional peer dependency, imported only by this entry point).
 */
export { IdempotencyHealthIndicator, type IdempotencyHealthOptions } from './idempotency-health.indicator.js';
