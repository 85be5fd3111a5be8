import { applyDecorators } from '@nestjs/common';
import { ApiHeader, DECORATORS } from '@nestjs/swagger';
import { PROBLEM_CONTENT_TYPE, ProblemType } from '../problems.js';

/** Options of {@link ApiIdempotent}; match them to the route's `@Idempotent()` options. */
export interface ApiIdempotentOptions {
  /** Whether the route requires the header (`@Idempotent({ required })`). Default: `true`. */
  required?: boolean;
}

/**
 * Documents an `@Idempotent()` route in the OpenAPI document of `@nestjs/swagger`: the
 * `Idempotency-Key` request header, and the answers the module adds (400 key missing or
 * malformed, 409 key in use with `Retry-After`, 422 key reused), as `application/problem+json`.
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
  return applyDecorators(
    ApiHeader({
      name: 'Idempotency-Key',
      required,
      description:
        'A unique key for this operation (a UUID or a ULID), the same on every retry. A retry of a completed ' +
        'request gets the first answer again, byte for byte, with `Idempotent-Replayed: true`.',
      schema: { type: 'string', minLength: 1, maxLength: 255 },
    }),
    problemResponses([
      [400, 'The Idempotency-Key header is missing or malformed.', [ProblemType.KeyMissing, ProblemType.KeyMalformed]],
      [409, 'A request with this Idempotency-Key is still running: retry after `Retry-After` seconds.', [ProblemType.KeyInUse], RETRY_AFTER],
      [422, 'This Idempotency-Key was used with a different request payload.', [ProblemType.KeyReused]],
    ]),
  );
}

/** A status the module answers with, its description, its problem types, its headers. */
type ProblemResponse = [status: number, description: string, types: ProblemType[], headers?: object];

const RETRY_AFTER = {
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 1 } },
};

/** Adds the responses, keeping any the route already documents (only their descriptions grow). */
function problemResponses(responses: ProblemResponse[]): MethodDecorator & ClassDecorator {
  return ((target: object, _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    const host = descriptor ? descriptor.value : target;
    const existing: Record<string, { description?: string }> = Reflect.getMetadata(DECORATORS.API_RESPONSE, host) ?? {};
    const merged: Record<string, object> = { ...existing };
    for (const [status, description, types, headers] of responses) {
      const documented = existing[status];
      merged[status] = documented
        ? { ...documented, description: [documented.description, description].filter(Boolean).join('\n\n') }
        : { description, content: { [PROBLEM_CONTENT_TYPE]: { schema: problemSchema(status, types) } }, ...(headers && { headers }) };
    }
    Reflect.defineMetadata(DECORATORS.API_RESPONSE, merged, host);
    return descriptor ?? target;
  }) as MethodDecorator & ClassDecorator;
}

function problemSchema(status: number, types: ProblemType[]): object {
  return {
    type: 'object',
    required: ['type', 'title', 'status', 'detail'],
    properties: {
      type: { type: 'string', enum: types },
      title: { type: 'string' },
      status: { type: 'integer', enum: [status] },
      detail: { type: 'string' },
    },
  };
}
