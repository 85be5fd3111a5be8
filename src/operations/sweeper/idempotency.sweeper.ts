import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { KeyTtls } from '../../core/key-ttls.js';
import { ModuleReadiness } from '../../core/gates/module-readiness.js';
import { IdempotencyEvents } from '../../observe/events/idempotency-events.js';
import { DatabaseHost } from '../../hosts/database-host.js';
import { IDEMPOTENCY_SETTINGS } from '../../idempotency.constants.js';
import type { IdempotencySettings } from '../../options/settings.js';
import { KeyTable } from '../../store/table/key-table.js';
import { TablesNotMigratedError } from '../../store/table/tables-not-migrated.error.js';
import { KeyPartitions } from './key-partitions.js';
import { DROP_RESPONSES_BATCH, DROP_RESPONSES_BATCH_PARTITIONED, SWEEP_BATCH, SWEEP_LOCK_ID } from './sweep.sql.js';

/**
 * How long one statement of a sweep may take before it is given up and its connection destroyed:
 * a batch of expired rows takes milliseconds, and a connection that died without a word would
 * never answer, leaving this instance never sweeping again.
 */
const SWEEP_STATEMENT_TIMEOUT_MS = 10_000;

/** How long shutdown waits for a sweep in progress before giving it up. */
const SHUTDOWN_WAIT_MS = 5_000;

/** What one sweep did. */
export interface SweepResult {
  /** False when another instance was sweeping (its batch held the sweep lock): nothing was done. */
  ran: boolean;
  /** Expired rows deleted. */
  deleted: number;
  /** On the partitioned table: partitions dropped whole (rows are never deleted one by one there). */
  partitionsDropped?: number;
  /** Keys past their ttl kept as tombstones whose response was dropped. */
  responsesDropped: number;
}

/**
 * Deletes expired keys in batches of `sweepBatchSize`, every `sweepInterval`, then drops the
 * responses of keys past their ttl kept as tombstones (`tombstone`); on the partitioned
 * table, creates partitions ahead and drops those wholly past instead (`KeyPartitions`), and at
 * bootstrap creates the partitions the longest ttl needs before any key is reserved (then opens
 * the module, `ModuleReadiness`), and again before a longer ttl's first key after bootstrap.
 * Each batch takes a PostgreSQL advisory lock for its own statement, so only one instance deletes
 * at a time, and a run that finds it taken stops (another instance is sweeping); runs never
 * overlap; shutdown waits for a run in progress to finish its batch (at most 5 s, then the batch
 * is given up and its connection destroyed; a batch still waiting for a connection sends
 * nothing). Each batch is given up after 10 s. Call `sweep()` to run it from your own scheduler
 * (with `sweepInterval: 0`).
 */
@Injectable()
export class IdempotencySweeper implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('IdempotencySweeper');
  private timer?: NodeJS.Timeout;
  private running?: Promise<SweepResult>;
  /** The app is shutting down: no batch starts any more. */
  private shuttingDown = false;
  /** Aborted once shutdown stops waiting: the batch in progress is given up. */
  private readonly stopping = new AbortController();

  constructor(
    @Inject(IDEMPOTENCY_SETTINGS) private readonly settings: IdempotencySettings,
    @Inject(DatabaseHost) private readonly host: DatabaseHost,
    private readonly events: IdempotencyEvents,
    private readonly table: KeyTable,
    private readonly partitions: KeyPartitions,
    private readonly ttls: KeyTtls,
    private readonly readiness: ModuleReadiness,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const partitioned = await this.table.verify(this.settings.outbox !== undefined).then(
      (table) => table.partitioned,
      (error: Error) => {
        if (error instanceof TablesNotMigratedError && this.settings.checkTables) throw error;
        this.logger.error(
          error instanceof TablesNotMigratedError
            ? `${error.message} (starting anyway: checkTables is false)`
            : `could not look up the idempotency_keys table (the first request looks again): ${error.message}`,
        );
        return false;
      },
    );
    if (partitioned) {
      await this.partitions.prepare({ timeoutMs: SWEEP_STATEMENT_TIMEOUT_MS });
      this.ttls.extendWith(() => this.partitions.prepare({ timeoutMs: SWEEP_STATEMENT_TIMEOUT_MS }));
    }
    this.readiness.markReady();
    if (this.settings.sweepIntervalMs <= 0) return;
    this.timer = setInterval(() => {
      if (!this.running) this.sweep().catch((error: Error) => this.logger.error(`sweep failed: ${error.message}`));
    }, this.settings.sweepIntervalMs);
    this.timer.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.shuttingDown = true;
    clearInterval(this.timer);
    const running = this.running?.catch(() => undefined);
    if (running) await Promise.race([running, sleep(SHUTDOWN_WAIT_MS, undefined, { ref: false })]);
    this.stopping.abort();
    await running;
  }

  /** Deletes every expired row now, unless another instance is sweeping. */
  sweep(): Promise<SweepResult> {
    this.running ??= this.run().finally(() => (this.running = undefined));
    return this.running;
  }

  private async run(): Promise<SweepResult> {
    if ((await this.table.strategy()).partitioned) return this.runOnPartitions();
    const startedAt = performance.now();
    const { signal } = this.stopping;
    let ran = false;
    let deleted = 0;
    let batch = 0;
    let last: string | null = null;
    do {
      if (this.shuttingDown) break;
      let result: { locked: boolean; deleted: number; last: string | null };
      try {
        const answer = await this.host.runAlone(
          'a sweep statement',
          [SWEEP_BATCH, [this.settings.sweepBatchSize, SWEEP_LOCK_ID, last]],
          {
            timeoutMs: SWEEP_STATEMENT_TIMEOUT_MS,
            signal,
          },
        );
        result = answer.rows[0];
      } catch (error) {
        if (signal.aborted) break;
        throw error;
      }
      // Taken: another instance is sweeping now, and carries on.
      if (!result.locked) break;
      ran = true;
      batch = result.deleted;
      deleted += batch;
      last = result.last ?? last;
    } while (batch === this.settings.sweepBatchSize);
    if (!ran) return { ran: false, deleted: 0, responsesDropped: 0 };
    const responsesDropped = await this.dropResponses(false);
    const durationMs = performance.now() - startedAt;
    if (deleted > 0) this.logger.log(`swept ${deleted} expired idempotency keys in ${Math.round(durationMs)} ms`);
    this.events.emit({ type: 'swept', deleted, responsesDropped, durationMs });
    return { ran: true, deleted, responsesDropped };
  }

  /**
   * Drops, in batches, the responses of keys past their ttl kept as tombstones (their rows stay
   * until they expire). Run by the instance whose sweep ran; batches skip rows a writer holds.
   */
  private async dropResponses(partitioned: boolean): Promise<number> {
    const { signal } = this.stopping;
    const statement = partitioned ? DROP_RESPONSES_BATCH_PARTITIONED : DROP_RESPONSES_BATCH;
    let dropped = 0;
    let batch = 0;
    do {
      if (this.shuttingDown) break;
      try {
        const answer = await this.host.runAlone('a sweep statement', [statement, [this.settings.sweepBatchSize]], {
          timeoutMs: SWEEP_STATEMENT_TIMEOUT_MS,
          signal,
        });
        batch = answer.rows[0].dropped;
      } catch (error) {
        if (signal.aborted) break;
        throw error;
      }
      dropped += batch;
    } while (batch === this.settings.sweepBatchSize);
    return dropped;
  }

  private async runOnPartitions(): Promise<SweepResult> {
    if (this.shuttingDown) return { ran: false, deleted: 0, responsesDropped: 0 };
    const startedAt = performance.now();
    const { signal } = this.stopping;
    let maintained: { ran: boolean; dropped: number };
    try {
      maintained = await this.partitions.maintain({ timeoutMs: SWEEP_STATEMENT_TIMEOUT_MS, signal });
    } catch (error) {
      if (signal.aborted) return { ran: false, deleted: 0, responsesDropped: 0 };
      throw error;
    }
    if (!maintained.ran) return { ran: false, deleted: 0, responsesDropped: 0 };
    const responsesDropped = await this.dropResponses(true);
    const durationMs = performance.now() - startedAt;
    const partitionsDropped = maintained.dropped;
    if (partitionsDropped > 0)
      this.logger.log(
        `dropped ${partitionsDropped} expired partitions of idempotency_keys in ${Math.round(durationMs)} ms`,
      );
    this.events.emit({ type: 'swept', deleted: 0, partitionsDropped, responsesDropped, durationMs });
    return { ran: true, deleted: 0, partitionsDropped, responsesDropped };
  }
}
