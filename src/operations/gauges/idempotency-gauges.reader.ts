import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { KeyDrain } from '../../core/gates/key-drain.js';
import { DatabaseHost } from '../../hosts/database-host.js';
import { IDEMPOTENCY_SETTINGS } from '../../idempotency.constants.js';
import type { IdempotencyGauges } from '../../observe/events/idempotency-event.js';
import { IdempotencyEvents } from '../../observe/events/idempotency-events.js';
import type { IdempotencySettings } from '../../options/settings.js';
import { OUTBOX_LAG } from '../../store/outbox/outbox.sql.js';
import { SWEEP_LAG } from '../../store/table/key-table.sql.js';
import { KeyTable } from '../../store/table/key-table.js';
import { OWN_NAME } from '../sweeper/partition-plan.js';
import { LIST_PARTITIONS } from '../sweeper/partitions.sql.js';

/** How long one read may take before it is given up. */
const READ_TIMEOUT_MS = 10_000;

/**
 * Reads what an operator watches (`IdempotencyGauges`) every `sweepInterval`, on each instance,
 * and emits it as a `gauges` event (the Prometheus metrics set their gauges from it): the
 * sweeper's lag, read from the expiry index (on the partitioned table, from the partitions'
 * bounds: no row is read), the oldest key this process holds, and the outbox's backlog. A value
 * the database fails to give is logged and left out of that event (the others are sent); reads
 * never overlap, and shutdown gives up the one in progress. `sweepInterval: 0` turns the schedule
 * off; `read()` reads now.
 */
@Injectable()
export class IdempotencyGaugesReader implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Idempotency');
  private timer?: NodeJS.Timeout;
  private running?: Promise<IdempotencyGauges>;
  /** Aborted at shutdown: a read in progress is given up. */
  private readonly stopping = new AbortController();

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
      if (!this.running) void this.read();
    }, this.settings.sweepIntervalMs);
    this.timer.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    this.stopping.abort();
    await this.running?.catch(() => undefined);
  }

  /** Reads the gauges now, emits them (`gauges`), and returns them. */
  read(): Promise<IdempotencyGauges> {
    this.running ??= this.readNow().finally(() => (this.running = undefined));
    return this.running;
  }

  /** Each value read on its own: one the database fails to give is left out, and logged. */
  private async readNow(): Promise<IdempotencyGauges> {
    const bound = { timeoutMs: READ_TIMEOUT_MS, signal: this.stopping.signal };
    const reading = async <T>(what: string, read: () => Promise<T>): Promise<T | undefined> => {
      try {
        return await read();
      } catch (error) {
        this.logger.warn(`reading the gauges: ${what} failed: ${(error as Error).message}`);
        return undefined;
      }
    };
    const gauges: IdempotencyGauges = {
      sweepLagMs: await reading('the sweeper lag', async () =>
        (await this.table.strategy()).partitioned
          ? partitionsLagMs((await this.host.runAlone('reading the gauges', [LIST_PARTITIONS, []], bound)).rows[0])
          : Number((await this.host.runAlone('reading the gauges', [SWEEP_LAG, []], bound)).rows[0]?.lag_ms ?? 0),
      ),
      oldestInFlightMs: this.drain.oldestInFlightMs(),
    };
    if (this.settings.outbox) {
      gauges.outbox = await reading('the outbox backlog', async () => {
        const [row] = (await this.host.runAlone('reading the gauges', [OUTBOX_LAG, []], bound)).rows;
        return { unsent: Number(row.unsent), oldestMs: Math.floor(Number(row.oldest_ms)) };
      });
    }
    this.events.emit({ type: 'gauges', ...gauges });
    return gauges;
  }
}

/** How long ago the oldest of the module's partitions wholly past ended: what the sweeper has yet to drop. */
function partitionsLagMs(row: { now_ms: number; partitions: Array<{ name: string; toMs: number | null }> }): number {
  const past = row.partitions
    .filter((partition) => OWN_NAME.test(partition.name))
    .map((partition) => partition.toMs)
    .filter((toMs): toMs is number => toMs !== null && toMs <= row.now_ms);
  return past.length === 0 ? 0 : row.now_ms - Math.min(...past);
}
