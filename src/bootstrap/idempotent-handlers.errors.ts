import { IdempotencyConfigurationError } from '../idempotency.errors.js';

/**
 * An `@Idempotent()` route whose responses cannot be recorded and replayed (`@Res()` without
 * passthrough, `@Next()`, `@Sse()`). Thrown at bootstrap; `routes` lists each route and its fix.
 */
export class UnreplayableRouteError extends IdempotencyConfigurationError {
  constructor(readonly routes: readonly string[]) {
    super(
      `these @Idempotent() routes cannot replay their responses:\n` + routes.map((route) => `  - ${route}`).join('\n'),
    );
  }
}

/**
 * `@Idempotent()` on a route of a safe method (`@Get()`, `@Head()`, `@Options()`), which changes
 * nothing a retry could do twice. Thrown at bootstrap; `routes` names each. On a controller marked
 * `@Idempotent()` as a whole, its safe routes are passed by instead.
 */
export class SafeMethodRouteError extends IdempotencyConfigurationError {
  constructor(readonly routes: readonly string[]) {
    super(
      `@Idempotent() is for routes that change something (POST, PUT, PATCH, DELETE); a GET, HEAD or OPTIONS ` +
        `request changes nothing a retry could do twice: remove it from these routes:\n` +
        routes.map((route) => `  - ${route}`).join('\n'),
    );
  }
}

/**
 * A decorator on a handler its entry does not serve: `@Idempotent()` on a handler that is neither
 * an HTTP route nor a GraphQL mutation: a microservice
 * `@MessagePattern()` / `@EventPattern()` handler, a GraphQL query, subscription or field
 * resolver, or a method of another provider (a WebSocket gateway, a service), where it would do
 * nothing; or `@IdempotentMessage()` on a handler that is no message pattern. Thrown at bootstrap;
 * `handlers` names each one.
 */
export class MisplacedDecoratorError extends IdempotencyConfigurationError {
  constructor(readonly handlers: readonly string[]) {
    super(
      `@Idempotent() works on HTTP controller routes and GraphQL mutations only, and @IdempotentMessage() on message handlers only; these handlers are neither ` +
        `for the decorator they carry: remove it from them (a @MessagePattern() / @EventPattern() handler takes @IdempotentMessage()):\n` +
        handlers.map((handler) => `  - ${handler}`).join('\n'),
    );
  }
}

/** @deprecated Renamed {@link MisplacedDecoratorError} (it names message handlers too); this alias goes in the next major. */
export const NotAnHttpRouteError = MisplacedDecoratorError;
/** @deprecated Renamed {@link MisplacedDecoratorError}. */
export type NotAnHttpRouteError = MisplacedDecoratorError;

/**
 * Several of the app's idempotent handlers are misused or misconfigured: thrown at bootstrap in
 * place of the first, so that one boot names every one. `errors` holds each, as it would have
 * been thrown alone.
 */
export class IdempotentHandlersError extends IdempotencyConfigurationError {
  constructor(readonly errors: readonly IdempotencyConfigurationError[]) {
    super(
      `${errors.length} problems with the app's idempotent handlers:\n` +
        errors.map((error) => `- ${error.message.replace(/^nestjs-pg-idempotency: /, '')}`).join('\n'),
    );
  }
}
