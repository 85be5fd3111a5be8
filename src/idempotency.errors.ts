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

/**
 * `@Idempotent()` on a handler that does not answer HTTP requests: a microservice
 * `@MessagePattern()` / `@EventPattern()` handler, or a method of a provider (a GraphQL resolver,
 * a WebSocket gateway, a service), where it would do nothing. Thrown at bootstrap; `handlers`
 * names each one.
 */
export class NotAnHttpRouteError extends IdempotencyConfigurationError {
  constructor(readonly handlers: readonly string[]) {
    super(
      `@Idempotent() works on HTTP controller routes only, and @IdempotentMessage() on message handlers only; these handlers are neither ` +
        `for the decorator they carry: remove it from them (a @MessagePattern() / @EventPattern() handler takes @IdempotentMessage()):\n` +
        handlers.map((handler) => `  - ${handler}`).join('\n'),
    );
    this.name = 'NotAnHttpRouteError';
  }
}
