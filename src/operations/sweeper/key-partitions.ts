import { Inject, Injectable, Logger } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { DatabaseFailure } from '../../hosts/database-failures.js';
import { type Bound, DatabaseHost, type SqlStatement } from '../../hosts/database-host.js';
import { IDEMPOTENCY_SETTINGS } from '../../idempotency.constants.js';
import { IdempotencyConfigurationError } from '../../idempotency.errors.js';
import { KeyTtls } from '../../core/key-ttls.js';
import type { IdempotencySettings } from '../../options/settings.js';
import { type Partition, planPartitions } from './partition-plan.js';
import {
  createPartitions,
  detachPartition,
  dropDetached,
  LIST_DETACHED,
  LIST_PARTITIONS,
  SWEEP_LOCK_TAKEN,
} from './partitions.sql.js';

/** A lock on the table not granted within `PARTITION_LOCK_TIMEOUT_MS`. */
const LOCK_TIMEOUT = '55P03';

/**
 * The most partitions the longest ttl may need: every lookup of a key reads one index per
 * partition, so a partition interval far shorter than the ttl makes each request slower.
 */
const MAX_PARTITIONS = 200;

/** A run that found the sweep lock taken: another instance does the work. */
const NOT_RAN = { ran: false, dropped: 0 } as const;

/** How long bootstrap keeps trying to create the partitions the longest ttl needs. */
const PREPARE_WITHIN_MS = 10_000;

/** What one maintenance run did. */
export interface PartitionsMaintained {
  /** False when another instance held the sweep lock: it does the work. */
  ran: boolean;
  dropped: number;
}

/**
 * The partitions of the partitioned `idempotency_keys`: every expiry time from now to the longest
 * ttl and two intervals more has a partition, and partitions wholly past are detached, then
 * dropped (one instance at a time, under the sweep lock). A step that waits for a lock on the table longer than
 * `PARTITION_LOCK_TIMEOUT_MS` is given up and tried again at the next sweep; a partition that
 * stays past for a whole interval more is logged.
 */
@Injectable()
export class KeyPartitions {
  private readonly logger = new Logger('IdempotencySweeper');

  constructor(
    @Inject(IDEMPOTENCY_SETTINGS) private readonly settings: IdempotencySettings,
    @Inject(DatabaseHost) private readonly host: DatabaseHost,
    private readonly ttls: KeyTtls,
  ) {}

  /**
   * At bootstrap: creates the partitions the longest ttl needs from now, waiting for another
   * instance that holds the sweep lock. Fails when the longest ttl needs more than 200 partitions,
   * when they are still missing after 10 s, or when the database refuses to create them (the
   * app's role must own `idempotency_keys`).
   */
  async prepare(bound: Bound): Promise<void> {
    const { partitionIntervalMs } = this.settings;
    const needed = Math.ceil(this.ttls.longestMs / partitionIntervalMs) + 2;
    if (needed > MAX_PARTITIONS) {
      throw new IdempotencyConfigurationError(
        `partitionInterval (${partitionIntervalMs} ms) is too short for the longest ttl or tombstone (${this.ttls.longestMs} ms): it needs ` +
          `${needed} partitions, and every lookup reads each of them; set partitionInterval to at least ` +
          `${Math.ceil(this.ttls.longestMs / (MAX_PARTITIONS - 2))} ms`,
      );
    }
    const deadline = Date.now() + PREPARE_WITHIN_MS;
    for (;;) {
      await this.maintain(bound, false);
      const { nowMs, partitions } = await this.list(bound);
      if (planPartitions(partitions, nowMs, this.settings.partitionIntervalMs, this.ttls.longestMs).create.length === 0)
        return;
      if (Date.now() > deadline) {
        throw new IdempotencyConfigurationError(
          `the partitions of idempotency_keys for the next ${this.ttls.longestMs} ms are still missing after ${PREPARE_WITHIN_MS} ms: ` +
            `another instance held the sweep lock, or open transactions on the table held its lock, all that time`,
        );
      }
      await sleep(200);
    }
  }

  /**
   * Creates the partitions ahead and, with `drop`, detaches those wholly past and drops every
   * detached one (those of a sweep that stopped between the two as well): `dropped` counts them.
   */
  async maintain(bound: Bound, drop = true): Promise<PartitionsMaintained> {
    const intervalMs = this.settings.partitionIntervalMs;
    const { nowMs, partitions } = await this.list(bound);
    const plan = planPartitions(partitions, nowMs, intervalMs, this.ttls.longestMs + 2 * intervalMs);
    if (
      plan.create.length > 0 &&
      (await this.step('creating partitions', createPartitions(plan.create), bound)) === 'taken'
    )
      return NOT_RAN;
    if (!drop) return { ran: true, dropped: 0 };
    for (const name of plan.drop) {
      const done = await this.step('detaching a partition', detachPartition(name), bound);
      if (done === 'taken') return NOT_RAN;
      if (done === 'waited')
        this.reportLongPast(
          partitions.find((partition) => partition.name === name)!,
          nowMs,
        );
    }
    const { rows } = await this.host.runAlone('listing detached partitions', [LIST_DETACHED, []], bound);
    let dropped = 0;
    for (const name of rows[0].names as string[]) {
      const done = await this.step('dropping a detached partition', dropDetached(name), bound);
      if (done === 'taken') return NOT_RAN;
      if (done === 'done') dropped++;
    }
    return { ran: true, dropped };
  }

  /**
   * Runs one maintenance step: `taken` when another instance holds the sweep lock, `waited` when a
   * lock on the table was not granted within `PARTITION_LOCK_TIMEOUT_MS` (the next sweep tries again).
   */
  private async step(what: string, statement: SqlStatement, bound: Bound): Promise<'done' | 'waited' | 'taken'> {
    try {
      await this.host.runAlone(what, [statement, []], bound);
      return 'done';
    } catch (error) {
      const code = error instanceof DatabaseFailure ? error.sqlState : undefined;
      if (code === SWEEP_LOCK_TAKEN) return 'taken';
      if (code === LOCK_TIMEOUT) return 'waited';
      throw error;
    }
  }

  private async list(bound: Bound): Promise<{ nowMs: number; partitions: Partition[] }> {
    const { rows } = await this.host.runAlone('listing partitions', [LIST_PARTITIONS, []], bound);
    return { nowMs: rows[0].now_ms, partitions: rows[0].partitions };
  }

  /** Logs a partition whose drop keeps waiting for a lock a whole interval after it was past. */
  private reportLongPast({ name, toMs }: Partition, nowMs: number): void {
    if (toMs !== null && toMs <= nowMs - this.settings.partitionIntervalMs) {
      this.logger.warn(
        `partition ${name} of idempotency_keys is past but could not be dropped: its ACCESS EXCLUSIVE lock waited more than ` +
          `the limit behind open transactions on the table; the next sweep tries again`,
      );
    }
  }
}
