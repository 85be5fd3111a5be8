import { createParamDecorator } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { executionContext } from '../../hosts/execution-context.js';

/**
 * Injects the key transaction's EntityManager into an `@Idempotent()` handler parameter
 * (`undefined` in lease mode, and when a `required: false` route ran without a key).
 */
export const IdempotencyManager = createParamDecorator(
  (_data: unknown): EntityManager | undefined => executionContext.getStore()?.handle as EntityManager | undefined,
);
