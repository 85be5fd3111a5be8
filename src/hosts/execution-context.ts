import { AsyncLocalStorage } from 'node:async_hooks';
import type { ScopedKey } from '../key/scoped-key.js';
import type { Statement } from './database-host.js';

/**
 * A write that commits with the key's outcome, in its transaction, or never: `statement()` is
 * asked for at the commit (it may cover everything staged until then); `committed()` is told once
 * the commit succeeded.
 */
export interface CommittedEffect {
  /** The effect's write, run in the key's transaction before its commit (or alone, in lease mode). */
  statement(): Statement;
  /**
   * Lease mode: the key's recording (`recording`) and the effect's write as one statement, which
   * writes the effect only when the recording is written (the lease still held) and returns one
   * row whose `completed` is 1 then, 0 otherwise.
   */
  withRecording(recording: Statement): Statement;
  committed(): void;
}

/** What the code an idempotent handler runs can reach: its key and, in transactional mode, its transaction. */
export interface IdempotentExecution {
  scope: ScopedKey;
  /** The key transaction's database handle (a TypeORM EntityManager); absent in lease mode. */
  readonly handle?: unknown;
  /**
   * Adds a write that commits with the key's outcome, in the key's transaction (the outbox's
   * staged messages): not written when the work fails or the key is freed.
   */
  readonly withOutcome?: (effect: CommittedEffect) => void;
}

/**
 * Where `executionContext` lives on `globalThis`. An app that loads both builds of the package
 * (its own `import`, a CommonJS dependency's `require`) gets one context: code using either copy
 * sees the key's transaction the other opened. The suffix is the shape of `IdempotentExecution`:
 * a release that changes the shape changes the suffix.
 */
const CONTEXT_KEY = Symbol.for('nestjs-pg-idempotency.execution-context.v3');

type ContextHolder = { [CONTEXT_KEY]?: AsyncLocalStorage<IdempotentExecution> };

export const executionContext: AsyncLocalStorage<IdempotentExecution> = ((globalThis as ContextHolder)[CONTEXT_KEY] ??=
  new AsyncLocalStorage<IdempotentExecution>());
