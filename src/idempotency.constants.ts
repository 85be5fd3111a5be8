/** DI token of the resolved module settings (defaults merged). */
export const IDEMPOTENCY_SETTINGS = Symbol('IDEMPOTENCY_SETTINGS');

/** Metadata key under which `@Idempotent()` stores its route options. */
export const IDEMPOTENT_ROUTE = 'nestjs-pg-idempotency:route';

/** Response header that marks a replayed outcome. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/** Metadata key under which `@IdempotentMessage()` stores its handler options. */
export const IDEMPOTENT_MESSAGE = 'nestjs-pg-idempotency:message';
