import type { PooledConnection } from './bounded-statement.js';
import { IdempotencyError } from '../../idempotency.errors.js';

/** Connections of the module's own pool; each statement on it takes about a millisecond. */
export const OWN_POOL_SIZE = 2;

/** How a host opens, lends from and ends a pool of its kind. */
export interface PoolKind<Pool> {
  /** A pool with the app's connection options and `OWN_POOL_SIZE` connections. */
  open(): Promise<Pool>;
  lend(pool: Pool): Promise<PooledConnection>;
  end(pool: Pool): Promise<void>;
}

/**
 * The module's own small pool beside the app's, opened at its first use (one that fails to open
 * is opened again by the next caller). Lease mode keeps its rows with it (renewals, recordings,
 * releases), so that they never queue behind the app's requests for a connection: a renewal
 * waiting behind a busy pool would let the lease end under its live holder, and a retry would run
 * the handler again. Once closed (the app shut down), nothing is sent any more: a late statement
 * would open a pool nothing ends.
 */
export class OwnPool<Pool> {
  private pool?: Promise<Pool>;
  private closed = false;

  constructor(private readonly kind: PoolKind<Pool>) {}

  async connect(): Promise<PooledConnection> {
    if (this.closed) throw new IdempotencyError('the app has shut down; lease-mode statements are no longer sent');
    this.pool ??= this.kind.open().catch((error: unknown) => {
      this.pool = undefined;
      throw error;
    });
    return this.kind.lend(await this.pool);
  }

  async close(): Promise<void> {
    this.closed = true;
    const pool = await this.pool?.catch(() => undefined);
    this.pool = undefined;
    if (pool !== undefined) await this.kind.end(pool);
  }
}
