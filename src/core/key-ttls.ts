import { Inject, Injectable } from '@nestjs/common';
import { IDEMPOTENCY_SETTINGS } from '../idempotency.constants.js';
import type { IdempotencySettings } from '../options/settings.js';

/** What makes the key table ready for a longer ttl (the partitioned table creates partitions for it). */
export type TtlExtension = (longestMs: number) => Promise<void>;

/**
 * The longest ttl any entry uses: the module's, every route's, every message handler's, every
 * `IdempotencyService.run()` call's. Each entry reports the ttls it resolves; the key table is
 * prepared for the longest (`KeyPartitions`). A ttl reported after bootstrap that is longer than
 * any before waits, once, for the table to be extended before its first key is reserved.
 */
@Injectable()
export class KeyTtls {
  private longest: number;
  private extend?: TtlExtension;
  /** The extension in progress for the longest ttl, which later reports of that ttl wait for too. */
  private extending?: Promise<void>;

  constructor(@Inject(IDEMPOTENCY_SETTINGS) settings: IdempotencySettings) {
    this.longest = settings.ttlMs;
  }

  /** The longest ttl reported so far (every route's and message handler's, after bootstrap). */
  get longestMs(): number {
    return this.longest;
  }

  /**
   * Notes the ttl of an entry as it is resolved (a route's, a message handler's, at bootstrap): the
   * table is prepared for the longest. Its reservations report it again, and wait for the table.
   */
  note(ttlMs: number): void {
    void this.report(ttlMs)?.catch(() => undefined);
  }

  /**
   * Reports the ttl of a key about to be reserved. Returns `undefined` when the table is ready for
   * it; else a promise that settles once it is (it rejects when the table cannot be extended: the
   * key must not be reserved).
   */
  report(ttlMs: number): Promise<void> | undefined {
    if (ttlMs <= this.longest) return this.extending;
    this.longest = ttlMs;
    if (!this.extend) return undefined;
    const extending: Promise<void> = this.extend(ttlMs).finally(() => {
      if (this.extending === extending) this.extending = undefined;
    });
    this.extending = extending;
    return extending;
  }

  /** Called once the table is ready for the longest ttl at bootstrap: later longer ttls extend it first. */
  extendWith(extend: TtlExtension): void {
    this.extend = extend;
  }
}
