import { AsyncLocalStorage } from 'node:async_hooks';
import type { EntityManager } from 'typeorm';
import type { KeyScope } from '../store/key-scope.js';

/** What the code an idempotent handler runs can reach: its key and, in transactional mode, its transaction. */
export interface IdempotentExecution {
  scope: KeyScope;
  /** The key transaction's EntityManager; absent in lease mode. */
  manager?: EntityManager;
}

export const executionContext = new AsyncLocalStorage<IdempotentExecution>();
