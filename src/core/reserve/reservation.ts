import type { KeyHold } from '../hold/key-hold.js';
import type { StoredResponse } from '../../store/stored-response.js';
import type { Tombstone } from '../../store/tombstone.js';

/** What reserving a key found. */
export type Reservation =
  /** The key is ours: run the handler, then end the hold. */
  | { kind: 'held'; hold: KeyHold }
  /** Another request holds the key right now; `retryAfterSeconds` when its lease tells. */
  | { kind: 'in-progress'; retryAfterSeconds?: number }
  /** The key was used with another fingerprint. */
  | { kind: 'mismatch' }
  /** The key completed: replay `response`. */
  | { kind: 'completed'; response: StoredResponse }
  /** The key completed, and its response was dropped at its ttl: nothing runs (`tombstone` on the entry). */
  | { kind: 'tombstone'; tombstone: Tombstone };

/** A reservation that did not get the key, and so ends here. */
export type Refusal = Exclude<Reservation, { kind: 'held' }>;
