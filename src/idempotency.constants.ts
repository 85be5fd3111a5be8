/**
 * DI token of the resolved module settings (defaults merged). A registered symbol, as the port's
 * token is: an app that loads both builds of the package (its own `import`, a CommonJS
 * dependency's `require`) injects one settings provider from either. The suffix is the shape of
 * `IdempotencySettings`: a release that changes the shape changes the suffix.
 */
export const IDEMPOTENCY_SETTINGS = Symbol.for('nestjs-pg-idempotency.settings.v2');

/** Metadata key under which `@Idempotent()` stores its route options. */
export const IDEMPOTENT_ROUTE = 'nestjs-pg-idempotency:route';

/** Response header that marks a replayed outcome. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/**
 * Response header that tells when the key expires (`expiryHeader`): an HTTP-date, until which a
 * retry with the key is answered from what it recorded, and after which it is a new request.
 */
export const KEY_EXPIRES_HEADER = 'Idempotency-Key-Expires';

/** Metadata key under which `@IdempotentMessage()` stores its handler options. */
export const IDEMPOTENT_MESSAGE = 'nestjs-pg-idempotency:message';
