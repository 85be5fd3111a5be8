import type { IdempotencyMode } from '../../options/route-options.js';

/**
 * The broker a message event is about (`rmq`, `nats`, or a consumer's own name); HTTP events
 * carry none.
 */
interface Transported {
  transport?: string;
}

/** Why no key was taken (the `refused` event's reason, the `idempotency_refused_total` metric's). */
export type RefusalReason = 'shutting-down' | 'store-unavailable' | 'outcome-unreadable' | 'not-migrated';

/**
 * What an operator watches, read every `sweepInterval` by each instance: how long ago the oldest
 * expired key expired (the sweeper's lag; on the partitioned table, its oldest partition of the
 * module's wholly past), how long the oldest key this process holds has been held, and, with the
 * outbox, its unsent messages and how long the oldest has waited. 0 where there is none; a value
 * the database did not give this time (it failed) is left out.
 */
export interface IdempotencyGauges {
  sweepLagMs?: number;
  oldestInFlightMs: number;
  outbox?: { unsent: number; oldestMs: number };
}

/**
 * What happened to an idempotent request or message, or to the table. `handler` names the route
 * or message handler as `Controller.method` (low cardinality, fit for metric labels); no event
 * carries the key.
 */
export type IdempotencyEvent =
  /** The handler ran and its outcome was recorded: `status` is its answer's, or `0` for a plain result (a message's, a job's, a mutation's, a call's). */
  | ({ type: 'executed'; handler: string; mode: IdempotencyMode; status: number; durationMs: number } & Transported)
  /** A stored outcome was replayed (a message: a duplicate acked without running). */
  | ({ type: 'replayed'; handler: string; status: number } & Transported)
  /** A duplicate arrived while the key was in progress: 409 (a message: requeued, not run). */
  | ({ type: 'in-progress'; handler: string } & Transported)
  /** The key came back with another payload: 422 (a message: dead-lettered, not run). */
  | ({ type: 'mismatch'; handler: string } & Transported)
  /**
   * The key came back after its ttl and met its tombstone (`tombstone` on the entry): nothing ran,
   * 410 (a provider's route: 200; a message: acked). `status` is the one recorded.
   */
  | ({ type: 'tombstone'; handler: string; status: number } & Transported)
  /**
   * No key was taken, nothing ran: the app is shutting down (503 `shutting-down`), the store
   * could not be reached (503 `store-unavailable`), the recorded outcome cannot be opened (503
   * `outcome-unreadable`), or the key table does not exist (500 `store-not-migrated`). A message
   * is delivered again later.
   */
  | ({ type: 'refused'; handler: string; reason: RefusalReason } & Transported)
  /** A message that cannot be de-duplicated (no key, a key too long, not JSON): dead-lettered, nothing written. */
  | { type: 'malformed'; handler: string; transport: string; reason: string }
  /** A message whose handler failed its last attempt: recorded as failed, its writes undone, dead-lettered. */
  | { type: 'dead-lettered'; handler: string; transport: string; attempts: number; durationMs: number }
  /**
   * The handler ran but nothing was kept: the key is free again. `reason`: the outcome is not
   * stored by policy (5xx, transient 4xx), it failed to record or was too large, the client went
   * away, or the lease was taken over meanwhile.
   */
  | ({
      type: 'released';
      handler: string;
      mode: IdempotencyMode;
      reason: 'not-stored' | 'failed' | 'abandoned' | 'lease-lost';
      status?: number;
      durationMs: number;
    } & Transported)
  /**
   * A sweep deleted expired rows (on the partitioned table: dropped `partitionsDropped` partitions
   * whole), and dropped the responses of `responsesDropped` keys past their ttl kept as tombstones.
   */
  | { type: 'swept'; deleted: number; partitionsDropped?: number; responsesDropped?: number; durationMs: number }
  /**
   * The outbox's relay published a staged message (`sent`: the broker confirmed it; `failed`: it
   * is tried again later). `lagMs`: from its commit (the staging statement, sent with the COMMIT) to the broker's answer.
   */
  | { type: 'outbox-relayed'; publisher: string; outcome: 'sent' | 'failed'; attempts: number; lagMs: number }
  /** The relay deleted sent messages older than `outbox.keepSent`. */
  | { type: 'outbox-swept'; deleted: number }
  /** What an operator watches, read every `sweepInterval` (`IdempotencyGauges`). */
  | ({ type: 'gauges' } & IdempotencyGauges);
