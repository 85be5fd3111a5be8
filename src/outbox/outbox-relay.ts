import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { DatabaseHost, type Statement, type StatementResult } from '../hosts/database-host.js';
import { IDEMPOTENCY_SETTINGS } from '../idempotency.constants.js';
import { type OutboxSettings } from '../options/outbox-options.js';
import { OutboxPublishError } from './outbox-publish.error.js';
import type { IdempotencySettings } from '../options/settings.js';
import { CLAIM_MESSAGES, MARK_SENT, PUT_OFF, SWEEP_SENT } from '../store/outbox/outbox.sql.js';
import { messageContent } from '../store/outbox/outbox-payloads.js';
import { IdempotencyEvents } from '../observe/events/idempotency-events.js';
import { IdempotencyTelemetry } from '../observe/telemetry/idempotency-telemetry.js';
import { performance } from 'node:perf_hooks';
import { publishedWithin } from './published-within.js';

/** How long one of the relay's statements may take before it is given up. */
const STATEMENT_TIMEOUT_MS = 10_000;
/** The longest wait before a message whose publish failed is tried again. */
const MAX_RETRY_DELAY_MS = 60_000;

/** A claimed message, as `CLAIM_MESSAGES` returns it. */
interface ClaimedRow {
  id: string;
  message_id: string;
  publisher: string;
  destination: string;
  payload: Buffer;
  headers: unknown;
  attempts: number;
  /** From its commit (the staging statement's time) to the claim. */
  waited_ms: number;
}

/** What one round of the relay did. */
export interface RelayRound {
  claimed: number;
  sent: number;
  failed: number;
}

/**
 * Publishes the outbox's messages after their commit: claims a batch (the oldest unsent message
 * of each ordering key, for `outbox.claim`; no lock is held while publishing), publishes them side
 * by side, marks those the broker confirmed sent, and puts the others off (`retryDelay`, doubled
 * per attempt). It runs again at once while it finds messages, when a commit in this process
 * staged some (`nudge()`), and every `pollInterval` (another instance's, a relay's that died).
 *
 * Several instances relay side by side: a message is claimed by one relay at a time, so in the
 * normal case it is published once. A relay that dies between the publish and the mark leaves the
 * claim to run out: the message is published again (with the same id), and the consumer's key
 * absorbs it. Nothing is lost: a message stays unsent until a broker confirmed it. Every relaying
 * instance also deletes sent messages older than `keepSent`, every `sweepInterval`.
 */
@Injectable()
export class OutboxRelay implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('IdempotencyOutbox');
  private readonly outbox?: OutboxSettings;
  private readonly publisherNames: string[];
  private running = false;
  private loop?: Promise<void>;
  private nudged = false;
  private wake?: () => void;
  private sweepTimer?: NodeJS.Timeout;
  private sweeping = false;

  constructor(
    @Inject(IDEMPOTENCY_SETTINGS) private readonly settings: IdempotencySettings,
    @Inject(DatabaseHost) private readonly host: DatabaseHost,
    private readonly events: IdempotencyEvents,
    private readonly telemetry: IdempotencyTelemetry,
  ) {
    this.outbox = settings.outbox;
    this.publisherNames = [...(settings.outbox?.publishers.keys() ?? [])];
  }

  onApplicationBootstrap(): void {
    if (!this.outbox?.relay) return;
    this.running = true;
    this.loop = this.relay();
    if (this.settings.sweepIntervalMs > 0) {
      this.sweepTimer = setInterval(
        () =>
          void this.sweepSent().catch((error: Error) =>
            this.logger.error(`sweeping sent outbox messages failed: ${error.message}`),
          ),
        this.settings.sweepIntervalMs,
      );
      this.sweepTimer.unref();
    }
  }

  /** Stops claiming, and waits for the round in progress (its publishes and marks). */
  async beforeApplicationShutdown(): Promise<void> {
    this.running = false;
    clearInterval(this.sweepTimer);
    this.wake?.();
    await this.loop;
  }

  /** Tells the relay that messages were committed: it looks at once. */
  nudge(): void {
    this.nudged = true;
    this.wake?.();
  }

  /** One round: claims a batch, publishes it, marks what was sent. */
  async round(): Promise<RelayRound> {
    const span = this.telemetry.startRelay();
    try {
      const done = await this.relayBatch();
      this.telemetry.endRelay(span, done);
      return done;
    } catch (error) {
      this.telemetry.endRelay(span, { claimed: 0, sent: 0, failed: 0 }, (error as Error).message);
      throw error;
    }
  }

  private async relayBatch(): Promise<RelayRound> {
    const outbox = this.outbox!;
    const token = randomBytes(8).readBigInt64BE(0).toString();
    const { rows } = await this.run('claiming outbox messages', [
      CLAIM_MESSAGES,
      [outbox.batchSize, outbox.claimMs, token, this.publisherNames],
    ]);
    const claimed = rows as ClaimedRow[];
    if (claimed.length === 0) return { claimed: 0, sent: 0, failed: 0 };
    const claimedAt = performance.now();
    const answeredAfterMs: number[] = [];
    const published = await Promise.allSettled(
      claimed.map((row, index) =>
        this.publish(row).finally(() => (answeredAfterMs[index] = performance.now() - claimedAt)),
      ),
    );
    const sent = claimed.filter((_, index) => published[index].status === 'fulfilled').map((row) => row.id);
    if (sent.length > 0) await this.run('marking outbox messages sent', [MARK_SENT, [sent, token]]);
    let failed = 0;
    for (const [index, result] of published.entries()) {
      const { publisher, attempts, waited_ms } = claimed[index];
      const lagMs = waited_ms + answeredAfterMs[index];
      const outcome = result.status === 'fulfilled' ? 'sent' : 'failed';
      this.events.emit({ type: 'outbox-relayed', publisher, outcome, attempts, lagMs });
      if (result.status === 'fulfilled') continue;
      failed++;
      const row = claimed[index];
      const reason = (result.reason as Error | undefined)?.message ?? String(result.reason);
      const delayMs = Math.min(outbox.retryDelayMs * 2 ** Math.min(row.attempts - 1, 16), MAX_RETRY_DELAY_MS);
      this.logger.warn(
        `publishing outbox message ${row.message_id} to ${row.publisher} failed (attempt ${row.attempts}, tried again in ${delayMs} ms): ${reason}`,
      );
      await this.run('putting an outbox message off', [PUT_OFF, [row.id, token, delayMs, reason]]);
    }
    return { claimed: claimed.length, sent: sent.length, failed };
  }

  private async relay(): Promise<void> {
    while (this.running) {
      let round: RelayRound | undefined;
      try {
        round = await this.round();
      } catch (error) {
        this.logger.error(`relaying the outbox failed (tried again): ${(error as Error).message}`);
      }
      if (this.running && (round === undefined || round.claimed === 0)) await this.idle(this.outbox!.pollIntervalMs);
    }
  }

  /** Waits `ms`, or until nudged (or stopped); a nudge that came meanwhile ends it at once. */
  private idle(ms: number): Promise<void> | undefined {
    if (this.nudged) {
      this.nudged = false;
      return undefined;
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = undefined;
        this.nudged = false;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }

  private publish(row: ClaimedRow): Promise<void> {
    const publisher = this.outbox!.publishers.get(row.publisher);
    if (publisher === undefined)
      return Promise.reject(
        new OutboxPublishError(`this instance has no publisher named "${row.publisher}" in outbox.publishers`),
      );
    let content;
    try {
      const address = { messageId: row.message_id, publisher: row.publisher, destination: row.destination };
      content = messageContent(this.settings.outcomes, address, row);
    } catch (error) {
      return Promise.reject(error as Error);
    }
    const message = { id: row.message_id, destination: row.destination, ...content };
    return publishedWithin(publisher, message, this.outbox!.claimMs);
  }

  /**
   * Deletes sent messages older than `outbox.keepSent`, in batches of `sweepBatchSize`; returns how
   * many. Relaying instances run it every `sweepInterval`; call it from your own scheduler when
   * `sweepInterval` is 0. A sweep already running is not started again (0).
   */
  async sweepSent(): Promise<number> {
    if (this.sweeping || this.outbox === undefined) return 0;
    this.sweeping = true;
    try {
      const batch = this.settings.sweepBatchSize;
      let swept: number;
      let deleted = 0;
      do {
        const { rows } = await this.run('sweeping sent outbox messages', [SWEEP_SENT, [this.outbox.keepSentMs, batch]]);
        swept = rows[0].swept as number;
        deleted += swept;
      } while (swept === batch);
      if (deleted > 0) this.events.emit({ type: 'outbox-swept', deleted });
      return deleted;
    } finally {
      this.sweeping = false;
    }
  }

  private run(what: string, statement: Statement): Promise<StatementResult> {
    return this.host.runOnOwnPool(what, statement, { timeoutMs: STATEMENT_TIMEOUT_MS });
  }
}
