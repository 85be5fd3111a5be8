import { applyDecorators } from '@nestjs/common';
import { ApiHeader, DECORATORS } from '@nestjs/swagger';
import { keyHeader, PROBLEM_RESPONSES, problemResponse, withModuleDescription } from './idempotency-openapi.js';

/** Options of {@link ApiIdempotent}; match them to the route's `@Idempotent()` options. */
export interface ApiIdempotentOptions {
  /** Whether the route requires the header (`@Idempotent({ required })`). Default: `true`. */
  required?: boolean;
}

/** Where `ApiIdempotent` keeps its options, so that `createIdempotentDocument()` takes them over the route's. */
export const API_IDEMPOTENT = 'nestjs-pg-idempotency:api-idempotent';

/**
 * Documents an `@Idempotent()` route in the OpenAPI document of `@nestjs/swagger`: the
 * `Idempotency-Key` request header, and the answers the module adds (400 key missing or
 * malformed, 409 key in use with `Retry-After`, 422 key reused, 503 store unavailable), as
 * `application/problem+json`. `createIdempotentDocument()` documents every `@Idempotent()` route
 * without it; use it there to override what the route's options say (`required`), or with
 * `SwaggerModule.createDocument()` alone.
 *
 * ```ts
 * @Post()
 * @Idempotent()
 * @ApiIdempotent()
 * @ApiCreatedResponse({ type: Payment })
 * create(@Body() dto: CreatePaymentDto) { ... }
 * ```
 * Put it above the route's own `@ApiResponse()` decorators: a status the route documents itself
 * (a validation 400, say) keeps its schema, and gains the module's description.
 */
export function ApiIdempotent({ required = true }: ApiIdempotentOptions = {}): MethodDecorator & ClassDecorator {
  return applyDecorators(ApiHeader(keyHeader(required)), problemResponses(), remember({ required }));
}

/** Adds the module's responses, keeping any the route already documents (only their descriptions grow). */
function problemResponses(): MethodDecorator & ClassDecorator {
  return ((target: object, _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    const host = descriptor ? descriptor.value : target;
    const existing: Record<string, { description?: string }> = Reflect.getMetadata(DECORATORS.API_RESPONSE, host) ?? {};
    const merged: Record<string, object> = { ...existing };
    for (const response of PROBLEM_RESPONSES) {
      const [status, description] = response;
      const documented = existing[status];
      merged[status] = documented ? withModuleDescription(documented, description) : problemResponse(response);
    }
    Reflect.defineMetadata(DECORATORS.API_RESPONSE, merged, host);
    return descriptor ?? target;
  }) as MethodDecorator & ClassDecorator;
}

function remember(options: Required<ApiIdempotentOptions>): MethodDecorator & ClassDecorator {
  return ((target: object, _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    Reflect.defineMetadata(API_IDEMPOTENT, options, descriptor ? descriptor.value : target);
    return descriptor ?? target;
  }) as MethodDecorator & ClassDecorator;
}
