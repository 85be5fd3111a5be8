// #region cron
import { Injectable, Logger } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { IdempotencyService, IdempotencyTransaction } from 'nestjs-pg-idempotency';

/** The report's slot: an hour. REPORT_EVERY_SECONDS (a divisor of 60) shortens it, as the check does. */
const SLOT_SECONDS = Number(process.env.REPORT_EVERY_SECONDS ?? 3600);

@Injectable()
export class HourlyReport {
  private readonly logger = new Logger(HourlyReport.name);

  constructor(
    private readonly idempotency: IdempotencyService,
    private readonly tx: IdempotencyTransaction,
  ) {}

  // Every instance ticks; the slot is the key, so one of them reports it.
  @Cron(SLOT_SECONDS === 3600 ? CronExpression.EVERY_HOUR : `*/${SLOT_SECONDS} * * * * *`)
  async run(): Promise<void> {
    // The nearest whole slot: a tick that fires a little early or late still names its own slot.
    const slot = new Date(Math.round(Date.now() / (SLOT_SECONDS * 1000)) * SLOT_SECONDS * 1000);
    const result = await this.idempotency.run({ scope: 'hourly-report', key: slot.toISOString(), ttl: '7d' }, () =>
      this.tx.manager.query(
        `INSERT INTO reports (slot, payouts, total)
         SELECT $1, count(*), coalesce(sum(amount), 0) FROM payouts
         WHERE created_at >= $1::timestamptz - make_interval(secs => $2) AND created_at < $1`,
        [slot, SLOT_SECONDS],
      ),
    );
    if (result.kind === 'failed' || result.kind === 'unavailable')
      this.logger.error(`the report of ${slot.toISOString()} did not run: ${String(result.error)}`);
    else this.logger.log(`the report of ${slot.toISOString()}: ${result.kind}`); // held, replayed: another instance's
  }
}
// #endregion cron
