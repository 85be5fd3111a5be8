import { applyDecorators, SetMetadata, UseInterceptors } from '@nestjs/common';
import { IDEMPOTENT_ROUTE } from '../idempotency.constants.js';
import { IdempotencyInterceptor } from './idempotency.interceptor.js';
import type { IdempotentRouteOptions } from '../options/route-options.js';

/**
 * Makes a route exactly-once per `Idempotency-Key`: the first request runs inside a transaction
 * that also reserves the key, retries get the recorded response with `Idempotent-Replayed: true`,
 * a duplicate in flight gets 409. Options override the module's for this route.
 */
export const Idempotent = (options: IdempotentRouteOptions = {}): MethodDecorator & ClassDecorator =>
  applyDecorators(SetMetadata(IDEMPOTENT_ROUTE, options), UseInterceptors(IdempotencyInterceptor));
