import { createParamDecorator } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { transactionContext } from './transaction-context.js';

/**
 * Injects the key transaction's EntityManager into an `@Idempotent()` handler parameter
 * (`undefined` when the route ran without a key because it is `required: false`).
 */
export const IdempotencyManager = createParamDecorator(
  (_data: unknown): EntityManager | undefined => transactionContext.getStore(),
);
