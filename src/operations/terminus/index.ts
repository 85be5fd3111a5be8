/**
 * `nestjs-pg-idempotency/terminus`: a health indicator for the key store and the outbox. Needs
 * `@nestjs/terminus` (an optional peer dependency, imported only by this entry point).
 */
export {
  IdempotencyHealthIndicator,
  type IdempotencyHealthOptions,
  type OutboxHealthOptions,
} from './idempotency-health.indicator.js';
