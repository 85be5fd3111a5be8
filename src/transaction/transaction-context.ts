import { AsyncLocalStorage } from 'node:async_hooks';
import type { EntityManager } from 'typeorm';

/** The EntityManager of the key's transaction, for the code a handler runs. */
export const transactionContext = new AsyncLocalStorage<EntityManager>();
