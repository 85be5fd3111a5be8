import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { KeyDrain } from '../../core/key-drain.js';
import { DatabaseHost } from '../../hosts/database-host.js';
import { IDEMPOTENCY_SETTINGS } from '../../idempotency.constants.js';
import type { IdempotencyGauges } from '../../observe/events/idempotency-event.js';
import { IdempotencyEvents } from '../../observe/events/idempotency-events.js';
import type { IdempotencySettings } from '../../options/settings.js';
import { OUTBOX_LAG } from '../../store/outbox/outbox.sql.js';
import { SWEEP_LAG } from '../../store/table/key-table.sql.js';
import { KeyTable } from '../../store/table/key-table.js';
import { LIST_PARTITIONS } from '../sweeper/partitions.sql.js';

/** How long one read may take before it is given up. */
const READ_TIMEOUT_MS = 10_000;

/**
 * Reads what an operator watches (`IdempotencyGauges`) every `sweepInterval`, on each instance,
 * and emits it as a `gauges` event (the Prometheus metrics set their gauges from it): the
 * sweeper's lag, read from the expiry index (on the partitioned table, from the partitions'
 * bounds: no row is read), the oldest key this process holds, and the outbox's backlog. A read
 * that fails is logged and tried at the next tick; reads never overlap. `sweepInterval: 0` turns
 * the schedule off; `read()` reads now.
 */
@Injectable()
export class IdempotencyGaugesReader implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Idempotency');
  private timer?: NodeJS.Timeout;
  private running?: Promise<IdempotencyGauges>;

  constructor(
    @Inject(IDEMPOTENCY_SETTINGS) private readonly settings: IdempotencySettings,
    @Inject(DatabaseHost) private readonly host: DatabaseHost,
    private readonly table: KeyTable,
    private readonly drain: KeyDrain,
    private readonly events: IdempotencyEvents,
  ) {}

  onApplicationBootstrap(): void {
    if (this.settings.sweepIntervalMs <= 0) return;
    this.timer = setInterval(() => {
      if (!this.running)
        this.read().catch((error: Error) => this.logger.warn(`reading the gauges failed: ${error.message}`));
    }, this.settings.sweepIntervalMs);
    this.timer.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** Reads the gauges now, emits them (`gauges`), and returns them. */
  read(): Promise<IdempotencyGauges> {
    this.running ??= this.readNow().finally(() => (this.running = undefined));
    return this.running;
  }

  private async readNow(): Promise<IdempotencyGauges> {
    const bound = { timeoutMs: READ_TIMEOUT_MS };
    const gauges: IdempotencyGauges = {
      sweepLagMs: (await this.table.strategy()).partitioned
        ? partitionsLagMs((await this.host.runAlone('reading the gauges', [LIST_PARTITIONS, []], bound)).rows[0])
        : Number((await this.host.runAlone('reading the gauges', [SWEEP_LAG, []], bound)).rows[0]?.lag_ms ?? 0),
      oldestInFlightMs: this.drain.oldestInFlightMs(),
    };
    if (this.settings.outbox) {
      const [row] = (await this.host.runAlone('reading the gauges', [OUTBOX_LAG, []], bound)).rows;
      gauges.outbox = { unsent: Number(row.unsent), oldestMs: Math.floor(Number(row.oldest_ms)) };
    }
    this.events.emit({ type: 'gauges', ...gauges });
    return gauges;
  }
}

/** How long ago the oldest partition wholly past ended: what the sweeper has yet to drop. */
function partitionsLagMs(row: { now_ms: number; partitions: Array<{ toMs: number | null }> }): number {
  const past = row.partitions
    .map((partition) => partition.toMs)
    .filter((toMs): toMs is number => toMs !== null && toMs <= row.now_ms);
  return past.length === 0 ? 0 : row.now_ms - Math.min(...past);
}
