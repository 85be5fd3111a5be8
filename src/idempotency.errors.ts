/** The module cannot work as configured; the message says what to change. */
export class IdempotencyConfigurationError extends Error {
  constructor(message: string) {
    super(`nestjs-pg-idempotency: ${message}`);
    this.name = 'IdempotencyConfigurationError';
  }
}
