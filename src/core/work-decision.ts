/** How work run through the core with a plain result (a message, a job, a call) ended. */
export interface WorkEnd {
  failed: boolean;
  /** The failure is the store's (the database unavailable, a race lost), not the work's. */
  transient: boolean;
  /** The entry asks that this failure be recorded (a message's last attempt; a call's `recordFailure`). */
  recordFailure: boolean;
}

export type WorkDecision = { action: 'record'; rollbackWrites: boolean } | { action: 'release'; keepWrites: false };

/**
 * - Work that returned: its result is recorded with its writes.
 * - A failure of the store's: the key is freed and the writes undone, never recorded (a retry runs
 *   it again), whatever the entry asks.
 * - A failure the entry asks to record: recorded, its writes undone (a retry gets the failure).
 * - Any other failure: the key is freed and the writes undone.
 */
export function decideWork({ failed, transient, recordFailure }: WorkEnd): WorkDecision {
  if (!failed) return { action: 'record', rollbackWrites: false };
  if (transient || !recordFailure) return { action: 'release', keepWrites: false };
  return { action: 'record', rollbackWrites: true };
}
