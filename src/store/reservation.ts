import type { StoredResponse } from '../response/stored-response.js';
import type { KeyTransaction } from './key-transaction.js';

/** What reserving a key found (CONTRACT §4, §5, §6). */
export type Reservation =
  /** The key is ours: run the handler inside `transaction`. */
  | { kind: 'reserved'; transaction: KeyTransaction }
  /** Another request holds the key right now. */
  | { kind: 'in-progress' }
  /** The key was used with another fingerprint. */
  | { kind: 'mismatch' }
  /** The key completed: replay `response`. */
  | { kind: 'completed'; response: StoredResponse };
