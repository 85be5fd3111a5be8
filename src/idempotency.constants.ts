/** DI token of the resolved module settings (defaults merged). */
export const IDEMPOTENCY_SETTINGS = Symbol('IDEMPOTENCY_SETTINGS');

/** Metadata key under which `@Idempotent()` stores its route options. */
export const IDEMPOTENT_ROUTE = 'nestjs-pg-idempotency:route';

/** Response header that marks a replayed outcome. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/**
 * DI token of what `IdempotencyTransaction` needs of the app's database (the handle outside a key
 * transaction), shared by both builds of the package (`Symbol.for`): a CommonJS dependency's copy
 * of `IdempotencyTransaction` resolves it from the module the app imported from the ESM build,
 * and the other way round.
 */
export const HANDLER_DATABASE = Symbol.for('nestjs-pg-idempotency.handler-database.v1');
