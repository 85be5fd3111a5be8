/**
 * `nestjs-pg-idempotency/swagger`: OpenAPI documentation for `@Idempotent()` routes. Needs
 * `@nestjs/swagger` (an optional peer dependency, imported only by this entry point).
 */
export { ApiIdempotent, type ApiIdempotentOptions } from './api-idempotent.decorator.js';
export { createIdempotentDocument } from './idempotent-document.js';
