import { Inject, Injectable } from '@nestjs/common';
import { type HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { DatabaseHost } from '../../hosts/database-host.js';
import { IDEMPOTENCY_SETTINGS } from '../../idempotency.constants.js';
import { KeyTable } from '../../store/table/key-table.js';
import { OUTBOX_LAG } from '../../store/outbox/outbox.sql.js';
import { KEY_TABLE } from '../../store/table/module-tables.js';
import { SWEEP_LAG } from '../../store/table/key-table.sql.js';
import { KEY_TABLE_SHAPE } from './health.sql.js';

/** Options of one health check. */
export interface IdempotencyHealthOptions {
  /**
   * The longest the oldest expired row may wait for the sweeper (ms). Default: five sweep
   * intervals (an hour when the schedule is off), plus the partition interval on the
   * partitioned table (whose rows go a partition at a time).
   */
  maxSweepLagMs?: number;
  /** How long the check's statements may take (ms). Default: `5000`. */
  timeoutMs?: number;
}

/** Options of one outbox health check. */
export interface OutboxHealthOptions {
  /** The longest the oldest unsent message may wait (ms). Default: `60000`. */
  maxLagMs?: number;
  /** How long the check's statement may take (ms). Default: `5000`. */
  timeoutMs?: number;
}

/** What the indicator reads of the module's settings (`IdempotencySettings` has it). */
interface HealthSettings {
  readonly sweepIntervalMs: number;
  readonly partitionIntervalMs: number;
}

/**
 * A `@nestjs/terminus` health indicator for the key store: `up` when `idempotency_keys` is
 * reachable, migrated (every column the module uses is there), and swept (the oldest expired
 * row waits less than `maxSweepLagMs`); `down` otherwise, saying which. Add it to the providers
 * of the module that serves your health checks (it imports `TerminusModule`):
 *
 * ```ts
 * @Get('health')
 * @HealthCheck()
 * check() {
 *   return this.health.check([() => this.idempotency.isHealthy('idempotency')]);
 * }
 * ```
 */
@Injectable()
export class IdempotencyHealthIndicator {
  constructor(
    private readonly indicators: HealthIndicatorService,
    @Inject(DatabaseHost) private readonly host: DatabaseHost,
    @Inject(IDEMPOTENCY_SETTINGS) private readonly settings: HealthSettings,
    private readonly table: KeyTable,
  ) {}

  async isHealthy<const Key extends string>(
    key: Key,
    options: IdempotencyHealthOptions = {},
  ): Promise<HealthIndicatorResult<Key>> {
    const indicator = this.indicators.check(key);
    const bound = { timeoutMs: options.timeoutMs ?? 5_000 };
    let columns: string[];
    try {
      const { rows } = await this.host.runAlone(
        'the health check',
        [KEY_TABLE_SHAPE, [KEY_TABLE.columns.join(',')]],
        bound,
      );
      columns = rows.map((row) => row.column);
    } catch (error) {
      return indicator.down({
        reachable: false,
        message: `the key store cannot be reached: ${(error as Error).message}`,
      });
    }
    const missing = KEY_TABLE.columns.filter((column) => !columns.includes(column));
    if (missing.length === KEY_TABLE.columns.length) {
      return indicator.down({
        reachable: true,
        migrated: false,
        message: 'there is no idempotency_keys table: run the migration (npx nestjs-pg-idempotency migrate)',
      });
    }
    if (missing.length > 0) {
      return indicator.down({
        reachable: true,
        migrated: false,
        message: `idempotency_keys lacks ${missing.join(', ')}: run the migration (npx nestjs-pg-idempotency migrate)`,
      });
    }
    let lagMs: number;
    let maxSweepLagMs: number;
    try {
      const { rows } = await this.host.runAlone('the health check', [SWEEP_LAG, []], bound);
      lagMs = rows[0]?.lag_ms === null || rows[0]?.lag_ms === undefined ? 0 : Number(rows[0].lag_ms);
      maxSweepLagMs = options.maxSweepLagMs ?? (await this.defaultSweepLagMs());
    } catch (error) {
      return indicator.down({
        reachable: false,
        message: `the key store cannot be reached: ${(error as Error).message}`,
      });
    }
    const details = { reachable: true, migrated: true, sweepLagMs: lagMs, maxSweepLagMs };
    if (lagMs > maxSweepLagMs) {
      return indicator.down({
        ...details,
        message: `the oldest expired key expired ${lagMs} ms ago, more than ${maxSweepLagMs} ms: is the sweeper running?`,
      });
    }
    return indicator.up(details);
  }

  /**
   * The outbox's health: `up` when `idempotency_outbox` is reachable and its oldest unsent
   * message waits less than `maxLagMs` (details: `unsent`, `lagMs`); `down` otherwise (a broker
   * that refuses, no relay running, no table: run its migration).
   */
  async isOutboxHealthy<const Key extends string>(
    key: Key,
    options: OutboxHealthOptions = {},
  ): Promise<HealthIndicatorResult<Key>> {
    const indicator = this.indicators.check(key);
    const maxLagMs = options.maxLagMs ?? 60_000;
    let row: { unsent: number; oldest_ms: number };
    try {
      const { rows } = await this.host.runAlone('the outbox health check', [OUTBOX_LAG, []], {
        timeoutMs: options.timeoutMs ?? 5_000,
      });
      row = rows[0];
    } catch (error) {
      const message = (error as Error).message;
      return indicator.down({
        reachable: !/idempotency_outbox" does not exist/.test(message),
        message: /idempotency_outbox" does not exist/.test(message)
          ? 'there is no idempotency_outbox table: run its migration (npx nestjs-pg-idempotency migrate --outbox)'
          : `the outbox cannot be reached: ${message}`,
      });
    }
    const details = { reachable: true, unsent: row.unsent, lagMs: Math.floor(row.oldest_ms), maxLagMs };
    if (details.lagMs > maxLagMs) {
      return indicator.down({
        ...details,
        message: `the oldest unsent outbox message waits for ${details.lagMs} ms, more than ${maxLagMs} ms: is a relay running, and its broker answering?`,
      });
    }
    return indicator.up(details);
  }

  private async defaultSweepLagMs(): Promise<number> {
    const { sweepIntervalMs, partitionIntervalMs } = this.settings;
    const sweeping = sweepIntervalMs > 0 ? 5 * sweepIntervalMs : 3_600_000;
    return (await this.table.strategy()).partitioned ? sweeping + partitionIntervalMs : sweeping;
  }
}
