import { Inject, Injectable } from '@nestjs/common';
import { IDEMPOTENCY_SETTINGS } from '../idempotency.constants.js';
import { IdempotencyConfigurationError, IdempotencyError } from '../idempotency.errors.js';
import { executionContext, type IdempotentExecution } from '../hosts/execution-context.js';
import type { IdempotencySettings } from '../options/settings.js';
import { OutboxRelay } from './outbox-relay.js';
import { StagedMessages } from './staged-messages.js';

/** A message keyed work publishes through the outbox. */
export interface OutboxMessageToStage {
  /** The queue or routing key (RabbitMQ), the subject (JetStream). */
  destination: string;
  /**
   * The body: a `Buffer` or a string as they are, anything else as its JSON. For a consumer on
   * Nest's RMQ transport, give Nest's envelope: `{ pattern, data }`.
   */
  payload: unknown;
  /** Headers (AMQP headers, NATS headers), as text. */
  headers?: Record<string, string>;
  /** The publisher, by its name in `outbox.publishers`. Default: the only one. */
  to?: string;
  /**
   * Messages of one ordering key are published one at a time, in the order staged (an account, an
   * order id). Default: the key's own: one key's messages in order, other keys' side by side.
   */
  orderingKey?: string;
}

/** Thrown by `stage()` outside keyed work, or where it cannot stage (lease mode, after the work ended). */
export class OutboxStagingError extends IdempotencyError {}

/**
 * Stages messages in the key's transaction (a transactional outbox): inside an `@Idempotent()`
 * route, an `@IdempotentMessage()` handler or `IdempotencyService.run()`, `stage()` adds a
 * message that is written with the key's outcome, in the same commit as the work's writes, and
 * published after it; a work that fails (or whose key is freed) leaves none. Every message carries
 * an id derived from the key: a re-publish is absorbed by an `@IdempotentMessage()` consumer, and
 * JetStream's duplicate window drops it.
 */
@Injectable()
export class IdempotencyOutbox {
  private readonly staged = new WeakMap<IdempotentExecution, StagedMessages>();

  constructor(
    @Inject(IDEMPOTENCY_SETTINGS) private readonly settings: IdempotencySettings,
    private readonly relay: OutboxRelay,
  ) {}

  /** Stages `message`; returns its id (the AMQP `message-id`, the JetStream `Nats-Msg-Id`). */
  stage(message: OutboxMessageToStage): string {
    const outbox = this.settings.outbox;
    if (outbox === undefined)
      throw new IdempotencyConfigurationError('IdempotencyOutbox.stage() needs the module\'s "outbox" option');
    const execution = executionContext.getStore();
    if (execution === undefined) {
      throw new OutboxStagingError(
        'IdempotencyOutbox.stage() runs inside keyed work (an @Idempotent() route, an @IdempotentMessage() handler, IdempotencyService.run()): outside it nothing commits the message with a key',
      );
    }
    if (execution.withOutcome === undefined)
      throw new OutboxStagingError(
        'IdempotencyOutbox.stage(): this keyed work cannot stage (its hold takes no effects)',
      );
    const to = message.to ?? (outbox.publishers.size === 1 ? [...outbox.publishers.keys()][0] : undefined);
    if (to === undefined || !outbox.publishers.has(to)) {
      throw new IdempotencyConfigurationError(
        `IdempotencyOutbox.stage(): "to" must name one of outbox.publishers (${[...outbox.publishers.keys()].join(', ')})`,
      );
    }
    if (typeof message.destination !== 'string' || message.destination === '')
      throw new IdempotencyConfigurationError('IdempotencyOutbox.stage(): "destination" must be a non-empty string');
    const row = { publisher: to, destination: message.destination, ...readable(message) };
    let staged = this.staged.get(execution);
    if (staged === undefined) {
      staged = new StagedMessages(execution.scope, this.settings.outcomes, () => this.relay.nudge());
      execution.withOutcome(staged);
      this.staged.set(execution, staged);
    }
    return staged.add(row);
  }
}

/** The message's payload as bytes, its headers and ordering key checked. */
function readable(message: OutboxMessageToStage): {
  payload: Buffer;
  headers: Record<string, string>;
  orderingKey?: string;
} {
  const { payload, headers = {}, orderingKey } = message;
  let bytes: Buffer;
  if (Buffer.isBuffer(payload)) bytes = Buffer.from(payload);
  else if (typeof payload === 'string') bytes = Buffer.from(payload, 'utf8');
  else {
    const json = JSON.stringify(payload);
    if (json === undefined) throw new IdempotencyConfigurationError('IdempotencyOutbox.stage(): "payload" has no JSON');
    bytes = Buffer.from(json, 'utf8');
  }
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value !== 'string')
      throw new IdempotencyConfigurationError(`IdempotencyOutbox.stage(): header "${name}" must be a string`);
  }
  if (orderingKey !== undefined && (typeof orderingKey !== 'string' || orderingKey === ''))
    throw new IdempotencyConfigurationError('IdempotencyOutbox.stage(): "orderingKey" must be a non-empty string');
  return { payload: bytes, headers: { ...headers }, orderingKey };
}
