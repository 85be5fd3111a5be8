import { RefusedByDatabaseError } from '../../hosts/database-failures.js';
import type { StoredResponse } from '../../store/stored-response.js';
import type { KeyHold } from './key-hold.js';

/** How recording went: the hold's completion, or the error it failed with. */
export type Recording =
  | { kind: 'recorded' | 'skipped' }
  | { kind: 'lost' }
  /** `refused`: PostgreSQL refused the transaction itself (a retry meets the same refusal). */
  | { kind: 'failed'; refused: boolean };

/** What to do with a held key, as a decision table says: free it, or record its outcome. */
export type HoldDecision = { action: 'release'; keepWrites: boolean } | { action: 'record'; rollbackWrites: boolean };

/** What carrying out `D` came to: the key freed as it said, or how recording went (`failed` with the error). */
export type Carried<D extends HoldDecision> =
  | { kind: 'released'; decision: Extract<D, { action: 'release' }> }
  | Exclude<Recording, { kind: 'failed' }>
  | { kind: 'failed'; refused: boolean; error: unknown };

/**
 * Carries out `decision` on a held key, for every entry: frees it (the writes committed without
 * the key's row, or undone), or records `stored()` (the writes undone first when asked). When
 * that fails the key is freed and the writes undone; `refused` says PostgreSQL refused the
 * transaction itself, which a retry meets again.
 */
export async function carryOut<D extends HoldDecision>(
  hold: KeyHold,
  decision: D,
  stored: () => StoredResponse,
): Promise<Carried<D>> {
  try {
    if (decision.action === 'release') {
      await hold.release(decision.keepWrites);
      return { kind: 'released', decision: decision as Extract<D, { action: 'release' }> };
    }
    return { kind: await hold.complete(stored(), decision.rollbackWrites) };
  } catch (error) {
    if (hold.isOpen) await hold.release().catch(() => undefined);
    return { kind: 'failed', refused: error instanceof RefusedByDatabaseError, error };
  }
}
