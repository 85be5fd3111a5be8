import type { KeyHold } from './hold/key-hold.js';
import type { IdempotentExecution } from '../hosts/execution-context.js';
import type { ScopedKey } from '../key/scoped-key.js';

/**
 * What the work run with a key held finds in `executionContext`: its key and, while the hold's
 * transaction is open, its database handle. Code the work left running (a timer, a deferred job)
 * outlives the transaction: once that ended it finds no handle here, and the tools their default.
 */
export function keyExecution(scope: ScopedKey, hold: Pick<KeyHold, 'handle' | 'addEffect'>): IdempotentExecution {
  return {
    scope,
    get handle() {
      return hold.handle;
    },
    withOutcome: hold.addEffect,
  };
}
