import { Inject, Injectable } from '@nestjs/common';
import { IDEMPOTENCY_SETTINGS } from '../idempotency.constants.js';
import type { IdempotencySettings } from '../options/settings.js';
import type { IdempotentMessageOptions } from './message-options.js';
import { type MessageOutcome, type Settlement, settlementOf } from './message/message-outcome.js';
import { MessageRunner } from './message-run.js';
import { type MessageSettings, resolveMessageOptions } from './message-settings.js';
import type { ReceivedMessage } from './message/received-message.js';
import type { MessageDelivery } from './transports/message-delivery.js';

/** What `consume()` did with one delivery, and what the consumer does with the message now. */
export interface ConsumedMessage {
  outcome: MessageOutcome;
  /** `ack`, `requeue` (after `retryDelayMs`) or `dead-letter`: only ever after the outcome was recorded. */
  settlement: Settlement;
  retryDelayMs: number;
}

/** Options of a `consume()` call: the handler's, and its name for events and metrics. */
export interface ConsumeOptions extends IdempotentMessageOptions {
  /** The handler's name in events and metrics. Default: `'consumer'`. */
  name?: string;
}

/**
 * The message entry as a service call, for consumers written by hand (amqplib, the `nats`
 * client, `@golevelup/nestjs-rabbitmq`): run this function once for this message's key, in the
 * key's transaction. `consume()` reserves the key, runs `handler` with the key held (its writes,
 * through the module's hosts, in the key's transaction), records its reply, and says what to do
 * with the message; `consumeDelivery()` also settles a delivery of the module's transports
 * (`rmqDelivery(channel, message, pattern)`) with the broker.
 *
 * ```ts
 * channel.consume(queue, (amqp) => amqp && messages.consumeDelivery(rmqDelivery(channel, amqp, 'payment.created'), () => pay(JSON.parse(amqp.content))).catch(log));
 * ```
 */
@Injectable()
export class IdempotentMessages {
  private readonly resolved = new WeakMap<object, MessageSettings>();

  constructor(
    @Inject(IDEMPOTENCY_SETTINGS) private readonly settings: IdempotencySettings,
    private readonly runner: MessageRunner,
  ) {}

  async consume(
    message: ReceivedMessage,
    handler: () => unknown,
    options: ConsumeOptions = {},
  ): Promise<ConsumedMessage> {
    const settings = this.settingsOf(options);
    const outcome = await this.runner.run(message, settings, handler);
    return { outcome, settlement: settlementOf(outcome), retryDelayMs: settings.retryDelayMs };
  }

  /**
   * `consume()`, then the delivery settled with the broker as the outcome says. Rejects when the
   * settling fails (an ack on a channel that closed): catch it where the call is left running,
   * as in a consume callback, or it ends the process as an unhandled rejection. The message is
   * then delivered again, and its key answers it.
   */
  async consumeDelivery(
    delivery: MessageDelivery,
    handler: () => unknown,
    options: ConsumeOptions = {},
  ): Promise<ConsumedMessage> {
    const consumed = await this.consume(delivery.message, handler, options);
    await delivery.settle(consumed.settlement, consumed.retryDelayMs, consumed.outcome.kind === 'retry');
    return consumed;
  }

  /** The options' settings, checked once per options object. */
  private settingsOf(options: ConsumeOptions): MessageSettings {
    let found = this.resolved.get(options);
    if (!found)
      this.resolved.set(options, (found = resolveMessageOptions(this.settings, options, options.name ?? 'consumer')));
    return found;
  }
}
