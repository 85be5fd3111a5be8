import type { IdempotencyMode } from '../options/module-options.js';

/**
 * What happened to an idempotent request, or to the table. `handler` names the route as
 * `Controller.method` (low cardinality, fit for metric labels); no event carries the key.
 */
export type IdempotencyEvent =
  /** The handler ran and its outcome was recorded. */
  | { type: 'executed'; handler: string; mode: IdempotencyMode; status: number; durationMs: number }
  /** A stored outcome was replayed. */
  | { type: 'replayed'; handler: string; status: number }
  /** A duplicate arrived while the key was in progress: 409. */
  | { type: 'in-progress'; handler: string }
  /** The key came back with another payload: 422. */
  | { type: 'mismatch'; handler: string }
  /**
   * The handler ran but nothing was kept: the key is free again. `reason`: the outcome is not
   * stored by policy (5xx, transient 4xx), it failed to record or was too large, the client went
   * away, or the lease was taken over meanwhile.
   */
  | {
      type: 'released';
      handler: string;
      mode: IdempotencyMode;
      reason: 'not-stored' | 'failed' | 'abandoned' | 'lease-lost';
      status?: number;
      durationMs: number;
    }
  /** A sweep deleted expired rows (on the partitioned table: dropped `partitionsDropped` partitions whole). */
  | { type: 'swept'; deleted: number; partitionsDropped?: number; durationMs: number };
