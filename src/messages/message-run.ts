import { Injectable, Logger } from '@nestjs/common';
import { ExactlyOnce } from '../core/exactly-once.js';
import type { RunOutcome } from '../core/run-outcome.js';
import { IdempotencyEvents } from '../observe/events/idempotency-events.js';
import type { MessageOutcome } from './message/message-outcome.js';
import type { MessageSettings } from './message-settings.js';
import { isMalformed, readMessage } from './read-message.js';
import type { ReceivedMessage } from './message/received-message.js';

const logger = new Logger('IdempotentMessages');

/**
 * The message entry's mapping: a delivery read as the core's request (its key, scope and
 * fingerprint), run through the core (`ExactlyOnce`) with its last attempt's failure recorded, and
 * the core's outcome read as the message's. The caller settles the message with the broker only
 * afterwards (`settlementOf`), so an ack always follows the commit.
 */
@Injectable()
export class MessageRunner {
  constructor(
    private readonly core: ExactlyOnce,
    private readonly events: IdempotencyEvents,
  ) {}

  async run(message: ReceivedMessage, settings: MessageSettings, handle: () => unknown): Promise<MessageOutcome> {
    const { handler } = settings;
    const { transport } = message;
    const read = readMessage(message, settings);
    if (isMalformed(read)) {
      logger.error(`${handler}: a malformed ${transport} message was dead-lettered: ${read.malformed}`);
      this.events.emit({ type: 'malformed', handler, transport, reason: read.malformed });
      return { kind: 'malformed', why: read.malformed };
    }
    const policy = { recordFailure: () => message.attempt >= settings.maxAttempts, attempts: message.attempt };
    const outcome = await this.core.run(read, { ...settings, transport }, handle, policy);
    return this.outcomeOf(outcome, message, settings);
  }

  private outcomeOf(
    outcome: RunOutcome,
    message: ReceivedMessage,
    { handler, maxAttempts }: MessageSettings,
  ): MessageOutcome {
    const { transport } = message;
    switch (outcome.kind) {
      case 'executed':
        return { kind: 'executed', reply: outcome.value };
      case 'replayed':
        return { kind: 'duplicate', reply: outcome.value };
      case 'failed-before':
        return { kind: 'failed-before', error: outcome.error };
      case 'tombstone':
        return { kind: 'tombstone', completedAt: outcome.tombstone.completedAt };
      case 'held':
      case 'lease-lost':
        return { kind: 'held' };
      case 'mismatch':
        logger.error(
          `${handler}: a ${transport} message came with a key already used for another payload; it was not run, and was dead-lettered`,
        );
        return { kind: 'mismatch' };
      case 'failed':
        return { kind: 'retry', error: outcome.error };
      case 'failure-recorded':
        logger.error(
          `${handler}: a ${transport} message failed its attempt ${message.attempt} of ${maxAttempts}; recorded as failed and dead-lettered: ` +
            `${(outcome.error as Error)?.message ?? String(outcome.error)}`,
        );
        this.events.emit({
          type: 'dead-lettered',
          handler,
          transport,
          attempts: message.attempt,
          durationMs: outcome.durationMs,
        });
        return { kind: 'dead', error: outcome.error };
      case 'unavailable':
        return { kind: 'unavailable', error: outcome.error };
    }
  }
}
