import { type BeforeApplicationShutdown, Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { QueryRunner } from 'typeorm';
import { IdempotencyEvents } from '../events/idempotency-events.js';
import { IDEMPOTENCY_SETTINGS } from '../idempotency.constants.js';
import type { IdempotencySettings } from '../idempotency.options.js';
import { IdempotencyStore } from './idempotency.store.js';
import { releaseBroken } from './release-query-runner.js';
import { SWEEP_BATCH, SWEEP_LOCK_ID } from './store.sql.js';
import { connectionOf, connectWithin, destroyConnection, givenUpAfter } from './time-bound.js';

/**
 * How long one statement of a sweep may take before it is given up and its connection destroyed:
 * a batch of expired rows takes milliseconds, and a connection that died without a word would
 * never answer, leaving this instance never sweeping again.
 */
const SWEEP_STATEMENT_TIMEOUT_MS = 10_000;

/** How long shutdown waits for a sweep in progress before destroying its connection. */
const SHUTDOWN_WAIT_MS = 5_000;

/** What one sweep did. */
export interface SweepResult {
  /** False when another instance was sweeping (its batch held the sweep lock): nothing was done. */
  ran: boolean;
  /** Expired rows deleted. */
  deleted: number;
}

/**
 * Deletes expired keys in batches of `sweepBatchSize`, every `sweepInterval`.
 * Each batch takes a PostgreSQL advisory lock for its own statement, so only one instance deletes
 * at a time, and a run that finds it taken stops (another instance is sweeping); runs never
 * overlap; shutdown waits for a run in progress to finish its batch (at most 5 s, then its
 * connection is destroyed). Each statement is given up after 10 s. Call `sweep()` to run it from
 * your own scheduler (with `sweepInterval: 0`).
 */
@Injectable()
export class IdempotencySweeper implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('IdempotencySweeper');
  private timer?: NodeJS.Timeout;
  private running?: Promise<SweepResult>;
  /** The connection of the sweep in progress. */
  private connection?: QueryRunner;
  /** Why that connection was destroyed, if it was (it is then released as broken). */
  private abandoned?: Error;
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
    const running = this.running?.catch(() => undefined);
    if (!running) return;
    const finished = await Promise.race([running.then(() => true), sleep(SHUTDOWN_WAIT_MS, false, { ref: false })]);
    if (finished) return;
    // A batch still running: its statement fails at once. A run still waiting for a connection is
    // not waited for: when one comes, it finds the app stopping and sends nothing.
    if (!this.connection) return;
    this.destroyConnection(new Error('the app shut down during a sweep'));
    await running;
  }

  /** Deletes every expired row now, unless another instance is sweeping. */
  sweep(): Promise<SweepResult> {
    this.running ??= this.run().finally(() => (this.running = undefined));
    return this.running;
  }

  private async run(): Promise<SweepResult> {
    const startedAt = performance.now();
    const queryRunner = this.store.dataSource.createQueryRunner('master');
    if (!(await connectWithin(queryRunner, SWEEP_STATEMENT_TIMEOUT_MS))) {
      throw new Error(`a sweep got no connection within ${SWEEP_STATEMENT_TIMEOUT_MS} ms`);
    }
    if (this.stopping) {
      await queryRunner.release();
      return { ran: false, deleted: 0 };
    }
    this.connection = queryRunner;
    this.abandoned = undefined;
    const query = <T>(sql: string, params: unknown[]): Promise<T> =>
      givenUpAfter('a sweep statement', SWEEP_STATEMENT_TIMEOUT_MS, queryRunner.query(sql, params) as Promise<T>, () =>
        this.destroyConnection(new Error('a sweep statement was given up')),
      );
    try {
      let ran = false;
      let deleted = 0;
      let batch: number;
      do {
        const [result] = await query<[{ locked: boolean; deleted: number }]>(SWEEP_BATCH, [this.settings.sweepBatchSize, SWEEP_LOCK_ID]);
        // Taken: another instance is sweeping now, and carries on.
        if (!result.locked) break;
        ran = true;
        batch = result.deleted;
        deleted += batch;
      } while (batch === this.settings.sweepBatchSize && !this.stopping);
      if (!ran) return { ran: false, deleted: 0 };
      const durationMs = performance.now() - startedAt;
      if (deleted > 0) this.logger.log(`swept ${deleted} expired idempotency keys in ${Math.round(durationMs)} ms`);
      this.events.emit({ type: 'swept', deleted, durationMs });
      return { ran: true, deleted };
    } finally {
      this.connection = undefined;
      await (this.abandoned ? releaseBroken(queryRunner, this.abandoned) : queryRunner.release());
    }
  }

  /** Destroys the connection of the sweep in progress: its statement fails, its session lock ends. */
  private destroyConnection(reason: Error): void {
    this.abandoned = reason;
    if (this.connection) destroyConnection(connectionOf(this.connection));
  }
}
