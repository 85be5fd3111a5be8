/**
 * The base of every error the module throws: `instanceof IdempotencyError` tells them apart from
 * the app's. `name` is the class's, `cause` (when given) the error it comes from, and the message
 * says what happened and, where the app can do something about it, what to change.
 */
export class IdempotencyError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The module cannot work as configured, or is used where it cannot be; the message says what to change. */
export class IdempotencyConfigurationError extends IdempotencyError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(`nestjs-pg-idempotency: ${message}`, options);
  }
}
