import { Inject, Injectable } from '@nestjs/common';
import { DatabaseHost } from '../../hosts/database-host.js';
import { OUTBOX_BACKLOG, OUTBOX_LAG, RETRY_NOW } from '../../store/outbox/outbox.sql.js';

/** How long one console statement may take. */
const CONSOLE_TIMEOUT = { timeoutMs: 10_000 };

/** An unsent outbox message, as the console shows it: never its payload nor its headers. */
export interface UnsentMessage {
  /** The row's id (the staging order), for `retryNow()`. */
  id: string;
  messageId: string;
  publisher: string;
  destination: string;
  orderingKey: string;
  /** Publishes tried (a claim counts as one). */
  attempts: number;
  /** Why the last publish failed, if one did. */
  lastError: string | null;
  createdAt: Date;
  /** Until when a relay's claim holds it, or a failed publish put it off; `null`: claimable now. */
  claimedUntil: Date | null;
}

/**
 * The outbox's console, for an app to expose to its own admin (behind its own guard): the unsent
 * messages oldest first, with their attempts and last error; the backlog's size and age; and
 * `retryNow()` for a message put off after failures (once its broker is fixed).
 */
@Injectable()
export class IdempotencyOutboxConsole {
  constructor(@Inject(DatabaseHost) private readonly host: DatabaseHost) {}

  async unsent(limit = 50): Promise<UnsentMessage[]> {
    const { rows } = await this.host.runAlone('the outbox console', [OUTBOX_BACKLOG, [limit]], CONSOLE_TIMEOUT);
    return rows.map((row) => ({
      id: row.id,
      messageId: row.message_id,
      publisher: row.publisher,
      destination: row.destination,
      orderingKey: row.ordering_key,
      attempts: row.attempts,
      lastError: row.last_error,
      createdAt: row.created_at,
      claimedUntil: row.claimed_until,
    }));
  }

  /** How many messages are unsent, and how long the oldest has waited (ms). */
  async backlog(): Promise<{ unsent: number; oldestMs: number }> {
    const { rows } = await this.host.runAlone('the outbox console', [OUTBOX_LAG, []], CONSOLE_TIMEOUT);
    return { unsent: rows[0].unsent, oldestMs: Math.floor(rows[0].oldest_ms) };
  }

  /** Makes the unsent message `id` claimable at once; `false` when it is sent or unknown. */
  async retryNow(id: string): Promise<boolean> {
    const { rowCount } = await this.host.runAlone('the outbox console', [RETRY_NOW, [id]], CONSOLE_TIMEOUT);
    return rowCount === 1;
  }
}
