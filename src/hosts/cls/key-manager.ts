import type { EntityManager } from 'typeorm';
import { executionContext } from '../execution-context.js';

/** The EntityManager of the key's transaction the calling code runs in, while that is open. */
export function keyManager(): EntityManager | undefined {
  return executionContext.getStore()?.handle as EntityManager | undefined;
}
