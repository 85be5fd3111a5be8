import { type OutboxMessage, type OutboxPublisher } from '../../options/outbox-options.js';
import { OutboxPublishError } from '../outbox-publish.error.js';

/** What the publisher uses of an amqplib `ConfirmChannel` (`connection.createConfirmChannel()`). */
export interface AmqpConfirmChannel {
  publish(
    exchange: string,
    routingKey: string,
    content: Buffer,
    options: object,
    callback: (error: unknown) => void,
  ): boolean;
  on(event: 'return', listener: (message: { properties: { messageId?: string } }) => void): unknown;
}

export interface RabbitMqPublisherOptions {
  /** The exchange messages go to, their `destination` the routing key. Default: `''` (the queue named by `destination`). */
  exchange?: string;
  /** AMQP properties every message carries (`contentType`, `type`…); the id, headers and persistence are the outbox's. */
  properties?: Record<string, unknown>;
}

/**
 * Publishes the outbox's messages to RabbitMQ through a confirm channel: persistent, `mandatory`,
 * with the message's id as the AMQP `message-id` (the key an `@IdempotentMessage()` consumer reads
 * by default). A message is delivered once the broker confirms it; one the broker `nack`s, one it
 * returns (no queue is bound for its routing key: it would be dropped), and one whose channel
 * closes before the confirm are failures, published again later. `channel` is the channel, or a
 * function that gives the current one (an app that reopens its channel after a failure).
 */
export function rabbitMqPublisher(
  channel: AmqpConfirmChannel | (() => AmqpConfirmChannel | Promise<AmqpConfirmChannel>),
  options: RabbitMqPublisherOptions = {},
): OutboxPublisher {
  const { exchange = '', properties = {} } = options;
  const watched = new WeakMap<AmqpConfirmChannel, Set<string>>();
  /** The channel's returned message ids, watched from its first use. */
  const returnedOn = (current: AmqpConfirmChannel): Set<string> => {
    let returned = watched.get(current);
    if (returned === undefined) {
      const ids = new Set<string>();
      current.on('return', (message) => {
        if (message.properties.messageId) ids.add(message.properties.messageId);
      });
      watched.set(current, ids);
      returned = ids;
    }
    return returned;
  };
  return {
    async publish(message: OutboxMessage): Promise<void> {
      const current = typeof channel === 'function' ? await channel() : channel;
      const returned = returnedOn(current);
      await new Promise<void>((resolve, reject) => {
        current.publish(
          exchange,
          message.destination,
          message.payload,
          {
            contentType: 'application/json',
            ...properties,
            messageId: message.id,
            headers: message.headers,
            persistent: true,
            mandatory: true,
          },
          (error) => {
            // The broker sends a returned message before its confirm.
            if (returned.delete(message.id))
              reject(
                new OutboxPublishError(`RabbitMQ returned the message: no queue is bound for "${message.destination}"`),
              );
            else if (error)
              reject(
                error instanceof Error
                  ? error
                  : new OutboxPublishError(`RabbitMQ did not confirm the message: ${String(error)}`),
              );
            else resolve();
          },
        );
      });
    },
  };
}
