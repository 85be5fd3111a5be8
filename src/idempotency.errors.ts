/** The module cannot work as configured; the message says what to change. */
export class IdempotencyConfigurationError extends Error {
  constructor(message: string) {
    super(`nestjs-pg-idempotency: ${message}`);
    this.name = 'IdempotencyConfigurationError';
  }
}

/**
 * An `@Idempotent()` route whose responses cannot be recorded and replayed (`@Res()` without
 * passthrough, `@Next()`, `@Sse()`). Thrown at bootstrap; `routes` lists each route and its fix.
 */
export class UnreplayableRouteError extends IdempotencyConfigurationError {
  constructor(readonly routes: readonly string[]) {
    super(
      `these @Idempotent() routes cannot replay their responses:\n` +
        routes.map((route) => `  - ${route}`).join('\n'),
    );
    this.name = 'UnreplayableRouteError';
  }
}
