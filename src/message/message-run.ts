import { Inject, Injectable, Logger } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { ShuttingDownError } from '../drain/key-drain.js';
import { IdempotencyEvents } from '../events/idempotency-events.js';
import { DatabaseUnavailableError, LostRaceError } from '../hosts/database-failures.js';
import { DatabaseHost } from '../hosts/database-host.js';
import type { KeyHold } from '../hold/key-hold.js';
import { executionContext } from '../hosts/execution-context.js';
import type { IdempotentRequest } from '../parse/idempotent-request.js';
import { KeyReserver } from '../reserve/key-reserver.js';
import type { StoredResponse } from '../response/stored-response.js';
import type { MessageOutcome } from './message-outcome.js';
import type { MessageSettings } from './message-settings.js';
import { isMalformed, readMessage } from './read-message.js';
import type { ReceivedMessage } from './received-message.js';
import { failureRecord, recordedOutcome, replyRecord } from './stored-reply.js';

const logger = new Logger('IdempotentMessages');

/**
 * Runs one delivery of a message through the stages HTTP requests go through: its key reserved
 * (the replay cache, then the key's lock and row, in the handler's mode), the handler run with the
 * key held (in transactional mode inside the key's transaction, reachable by every tool as in an
 * HTTP request), then its reply recorded and committed with the handler's writes, or the key
 * released (the writes undone) when the handler failed, or, on its last attempt, the failure
 * recorded so that the message stops looping. Returns the outcome; the caller settles the message
 * with the broker only afterwards (`settlementOf`), so an ack always follows the commit.
 */
@Injectable()
export class MessageRunner {
  constructor(
    private readonly reserver: KeyReserver,
    private readonly events: IdempotencyEvents,
    @Inject(DatabaseHost) private readonly host: DatabaseHost,
  ) {}

  async run(message: ReceivedMessage, settings: MessageSettings, handle: () => unknown): Promise<MessageOutcome> {
    const { handler } = settings;
    const transport = message.transport;
    const read = readMessage(message, settings);
    if (isMalformed(read)) {
      logger.error(`${handler}: a malformed ${transport} message was dead-lettered: ${read.malformed}`);
      this.events.emit({ type: 'malformed', handler, transport, reason: read.malformed });
      return { kind: 'malformed', why: read.malformed };
    }
    let reservation;
    try {
      reservation = await this.reserver.reserve(read, settings);
    } catch (error) {
      if (error instanceof ShuttingDownError) {
        this.events.emit({ type: 'refused', handler, reason: 'shutting-down', transport });
        return { kind: 'unavailable', error };
      }
      logger.error(`${handler}: reserving a message's key failed (delivered again later): ${(error as Error)?.message ?? String(error)}`);
      return { kind: 'unavailable', error };
    }
    switch (reservation.kind) {
      case 'held':
        return this.runHeld(reservation.hold, read, message, settings, handle);
      case 'completed': {
        const recorded = recordedOutcome(reservation.response);
        this.events.emit({ type: 'replayed', handler, status: reservation.response.status, transport });
        return recorded;
      }
      case 'mismatch':
        logger.error(`${handler}: a ${transport} message came with a key already used for another payload; it was not run, and was dead-lettered`);
        this.events.emit({ type: 'mismatch', handler, transport });
        return { kind: 'mismatch' };
      case 'in-progress':
        this.events.emit({ type: 'in-progress', handler, transport });
        return { kind: 'held' };
    }
  }

  private async runHeld(hold: KeyHold, request: IdempotentRequest, message: ReceivedMessage, settings: MessageSettings, handle: () => unknown): Promise<MessageOutcome> {
    const { handler, mode } = settings;
    const transport = message.transport;
    const startedAt = performance.now();
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    const execution = {
      scope: request.scope,
      get handle() {
        return hold.handle;
      },
    };
    let reply: unknown;
    let failure: { error: unknown } | undefined;
    try {
      reply = await executionContext.run(execution, () => hold.enterHandler(async () => handle(), settled));
    } catch (error) {
      failure = { error };
    } finally {
      settle();
    }
    // Database trouble in the handler (a lost connection, a lost race) is the store's, not the
    // message's: delivered again, never counted toward dead-lettering.
    const transient = failure !== undefined && this.isTransient(failure.error);
    const last = message.attempt >= settings.maxAttempts && !transient;
    try {
      if (failure && !last) {
        await hold.release();
        this.events.emit({ type: 'released', handler, mode, reason: 'failed', durationMs: performance.now() - startedAt, transport });
        return transient ? { kind: 'unavailable', error: failure.error } : { kind: 'retry', error: failure.error };
      }
      const stored: StoredResponse = failure ? failureRecord(failure.error, message.attempt) : replyRecord(reply);
      const completion = await hold.complete(stored, failure !== undefined);
      if (completion === 'lost') {
        this.events.emit({ type: 'released', handler, mode, reason: 'lease-lost', durationMs: performance.now() - startedAt, transport });
        return { kind: 'held' };
      }
    } catch (error) {
      if (hold.isOpen) await hold.release().catch(() => undefined);
      logger.error(`${handler}: recording a message's outcome failed (delivered again later): ${(error as Error)?.message ?? String(error)}`);
      this.events.emit({ type: 'released', handler, mode, reason: 'failed', durationMs: performance.now() - startedAt, transport });
      return { kind: 'unavailable', error };
    }
    const durationMs = performance.now() - startedAt;
    if (failure) {
      logger.error(`${handler}: a ${transport} message failed its attempt ${message.attempt} of ${settings.maxAttempts}; recorded as failed and dead-lettered: ${(failure.error as Error)?.message ?? String(failure.error)}`);
      this.events.emit({ type: 'dead-lettered', handler, transport, attempts: message.attempt, durationMs });
      return { kind: 'dead', error: failure.error };
    }
    this.events.emit({ type: 'executed', handler, mode, status: 200, durationMs, transport });
    return { kind: 'executed', reply };
  }

  private isTransient(error: unknown): boolean {
    const failure = this.host.failureOf(error);
    return failure instanceof DatabaseUnavailableError || failure instanceof LostRaceError;
  }
}
