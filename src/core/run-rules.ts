import type { ReservationRules } from './reserve/key-reserver.js';

/** What the core needs of an entry's settings to run work under a key. */
export interface RunRules extends ReservationRules {
  /** The work's name in events, spans, metrics and logs (`Controller.method`, a consumer's or a call's name). */
  readonly handler: string;
  /** The broker a message entry names in its events; none for other entries. */
  readonly transport?: string;
  /** Wait mode: how long a key another run holds is waited for before `in-progress` is answered (none: at once). */
  readonly waitMs?: number;
}

/** What the entry decides of a failure of the work. */
export interface FailurePolicy {
  /** Whether this failure (never the store's) is recorded, so that a retry gets it instead of running. */
  recordFailure(error: unknown): boolean;
  /** The attempts a recorded failure says were made. */
  readonly attempts: number;
}

/** A failure is never recorded: the key is freed and the writes undone, and a retry runs the work again. */
export const RELEASE_EVERY_FAILURE: FailurePolicy = { recordFailure: () => false, attempts: 1 };
