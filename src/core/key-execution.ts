import type { KeyHold } from './hold/key-hold.js';
import type { CommittedEffect, IdempotentExecution } from '../hosts/execution-context.js';
import type { ScopedKey } from '../key/scoped-key.js';

/**
 * What the work run with a key held finds in `executionContext`: its key and, while the hold's
 * transaction is open, its database handle. Code the work left running (a timer, a deferred job)
 * outlives the transaction: once that ended it finds no handle here, and the tools their default.
 */
export function keyExecution(scope: ScopedKey, hold: Pick<KeyHold, 'handle' | 'addEffect'>): IdempotentExecution {
  return new KeyExecution(scope, hold);
}

/**
 * The execution as a class, its `handle` a getter of the class: V8 makes an object literal's
 * getters anew for each literal, in the old generation, and what they capture (the hold, its
 * transaction) then survives every scavenge until a full collection.
 */
class KeyExecution implements IdempotentExecution {
  readonly withOutcome?: (effect: CommittedEffect) => void;

  readonly #hold: Pick<KeyHold, 'handle' | 'addEffect'>;

  constructor(
    readonly scope: ScopedKey,
    hold: Pick<KeyHold, 'handle' | 'addEffect'>,
  ) {
    this.#hold = hold;
    this.withOutcome = hold.addEffect;
  }

  get handle(): unknown {
    return this.#hold.handle;
  }
}
