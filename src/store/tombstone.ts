/** What a tombstone keeps of a completed key once its response is gone. */
export interface Tombstone {
  /** When the key completed. */
  readonly completedAt: Date;
  /** When its response was dropped (its ttl's end). */
  readonly responseExpiredAt: Date;
  /** Until when the tombstone is kept: a retry after it is a new request. */
  readonly expiresAt: Date;
  /** The recorded status: an HTTP route's, or a plain result's code (0: a value; 1: a recorded failure). */
  readonly status: number;
}
