import { type BeforeApplicationShutdown, Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { IdempotencyEvents } from '../events/idempotency-events.js';
import { IDEMPOTENCY_SETTINGS } from '../idempotency.constants.js';
import type { IdempotencySettings } from '../idempotency.options.js';
import { IdempotencyStore } from './idempotency.store.js';
import { SWEEP_BATCH, SWEEP_LOCK_ID } from './store.sql.js';

/** What one sweep did. */
export interface SweepResult {
  /** False when another instance was sweeping (it holds the advisory lock): nothing was done. */
  ran: boolean;
  /** Expired rows deleted. */
  deleted: number;
}

/**
 * Deletes expired keys in batches of `sweepBatchSize`, every `sweepInterval` (CONTRACT §7).
 * A run holds a PostgreSQL advisory lock, so only one instance sweeps at a time; runs never
 * overlap; shutdown waits for a run in progress to finish its batch. Call `sweep()` to run it
 * from your own scheduler (with `sweepInterval: 0`).
 */
@Injectable()
export class IdempotencySweeper implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('IdempotencySweeper');
  private timer?: NodeJS.Timeout;
  private running?: Promise<SweepResult>;
  private stopping = false;

  constructor(
    @Inject(IDEMPOTENCY_SETTINGS) private readonly settings: IdempotencySettings,
    private readonly store: IdempotencyStore,
    private readonly events: IdempotencyEvents,
  ) {}

  onApplicationBootstrap(): void {
    if (this.settings.sweepIntervalMs <= 0) return;
    this.timer = setInterval(() => {
      if (!this.running) this.sweep().catch((error: Error) => this.logger.error(`sweep failed: ${error.message}`));
    }, this.settings.sweepIntervalMs);
    this.timer.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** Deletes every expired row now, unless another instance is sweeping. */
  sweep(): Promise<SweepResult> {
    this.running ??= this.run().finally(() => (this.running = undefined));
    return this.running;
  }

  private async run(): Promise<SweepResult> {
    const startedAt = performance.now();
    const queryRunner = this.store.dataSource.createQueryRunner('master');
    try {
      const [{ locked }] = await queryRunner.query(`SELECT pg_try_advisory_lock($1::bigint) AS locked`, [SWEEP_LOCK_ID]);
      if (!locked) return { ran: false, deleted: 0 };
      let deleted = 0;
      try {
        let batch: number;
        do {
          const [, count]: [unknown, number] = await queryRunner.query(SWEEP_BATCH, [this.settings.sweepBatchSize]);
          batch = count;
          deleted += batch;
        } while (batch === this.settings.sweepBatchSize && !this.stopping);
      } finally {
        await queryRunner.query(`SELECT pg_advisory_unlock($1::bigint)`, [SWEEP_LOCK_ID]);
      }
      const durationMs = performance.now() - startedAt;
      if (deleted > 0) this.logger.log(`swept ${deleted} expired idempotency keys in ${Math.round(durationMs)} ms`);
      this.events.emit({ type: 'swept', deleted, durationMs });
      return { ran: true, deleted };
    } finally {
      await queryRunner.release();
    }
  }
}
