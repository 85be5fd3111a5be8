import { setTimeout as sleep } from 'node:timers/promises';
import type { ReceivedMessage } from '../message/received-message.js';
import { type MessageDelivery, once } from './message-delivery.js';

/** What the entry uses of an amqplib message (`ConsumeMessage`). */
export interface AmqpMessage {
  content: Buffer;
  fields: { deliveryTag: number; redelivered: boolean; exchange: string; routingKey: string };
  /** The properties the entry reads; the others (amqplib's `MessageProperties`) go with a requeued copy as they are. */
  properties: { messageId?: string; headers?: Record<string, unknown> };
}

/** What the entry uses of an amqplib channel (a `ConfirmChannel` when the copy must be confirmed). */
export interface AmqpChannel {
  ack(message: AmqpMessage): void;
  nack(message: AmqpMessage, allUpTo?: boolean, requeue?: boolean): void;
  sendToQueue(queue: string, content: Buffer, options?: object, callback?: (error: unknown) => void): boolean;
  /** A `ConfirmChannel`'s: its publishes are confirmed by the broker. */
  waitForConfirms?(): Promise<void>;
}

/** The header that counts a message's deliveries on a classic queue, where the broker counts none. */
export const ATTEMPT_HEADER = 'x-idempotency-attempt';

/**
 * The delivery of an AMQP message (RabbitMQ), from Nest's RMQ transport (`data` is the payload Nest
 * read: `{ pattern, data }`'s `data`) or from a consumer of the app's own (`data` omitted: the body
 * is read as JSON, and one that is not is malformed). The key is the `message-id` property; the
 * attempt is the quorum queue's `x-delivery-count` plus one, else the module's own
 * `x-idempotency-attempt` header, else 1.
 *
 * Settled: `ack`; `dead-letter` is a `nack` without requeue (to the queue's dead-letter exchange,
 * if it has one); `requeue` waits `retryDelayMs`, then on a quorum queue `nack`s with requeue (the
 * broker counts the delivery), and elsewhere, for a message published to the default exchange,
 * sends a copy to its queue with the attempt header (one higher after a failed attempt),
 * confirmed, before the ack (so that the next delivery knows its attempt: a `ConfirmChannel`'s
 * only); any other is `nack`ed with requeue.
 */
export function rmqDelivery(
  channel: AmqpChannel,
  amqp: AmqpMessage,
  pattern: string,
  data?: { value: unknown },
): MessageDelivery {
  const headers = textHeaders(amqp.properties.headers);
  const counted = amqp.properties.headers?.['x-delivery-count'];
  const attempt =
    typeof counted === 'number'
      ? counted + 1
      : Number.isInteger(Number(headers[ATTEMPT_HEADER])) && Number(headers[ATTEMPT_HEADER]) > 0
        ? Number(headers[ATTEMPT_HEADER])
        : 1;
  let payload: { data: unknown; malformed?: string };
  if (data) payload = { data: data.value };
  else {
    try {
      payload = { data: JSON.parse(amqp.content.toString('utf8')) };
    } catch {
      payload = { data: undefined, malformed: 'the message body is not JSON' };
    }
  }
  const message: ReceivedMessage = {
    transport: 'rmq',
    pattern,
    id: amqp.properties.messageId || undefined,
    headers,
    attempt,
    ...payload,
  };
  return {
    message,
    settle: once(async (settlement, retryDelayMs, failed) => {
      if (settlement === 'ack') return channel.ack(amqp);
      if (settlement === 'dead-letter') return channel.nack(amqp, false, false);
      if (retryDelayMs > 0) await sleep(retryDelayMs);
      if (typeof counted === 'number' || amqp.fields.exchange !== '') return channel.nack(amqp, false, true);
      const copy = {
        ...amqp.properties,
        headers: { ...amqp.properties.headers, [ATTEMPT_HEADER]: failed ? attempt + 1 : attempt },
      };
      // A plain channel confirms nothing: no copy, the original requeued (counted as the same attempt).
      if (typeof channel.waitForConfirms !== 'function') return channel.nack(amqp, false, true);
      await new Promise<void>((resolve, reject) => {
        channel.sendToQueue(amqp.fields.routingKey, amqp.content, copy, (error) => (error ? reject(error) : resolve()));
      }).then(
        () => channel.ack(amqp),
        () => channel.nack(amqp, false, true),
      );
    }),
  };
}

/** The message's headers as text (AMQP header values may be numbers, booleans, buffers). */
function textHeaders(headers: Record<string, unknown> | undefined): Record<string, string> {
  const text: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (value === undefined || value === null) continue;
    text[name] = Buffer.isBuffer(value)
      ? value.toString('utf8')
      : typeof value === 'object'
        ? JSON.stringify(value)
        : String(value);
  }
  return text;
}
