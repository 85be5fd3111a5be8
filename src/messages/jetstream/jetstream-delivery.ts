import type { ReceivedMessage } from '../message/received-message.js';
import { type MessageDelivery, once } from '../transports/message-delivery.js';

/** What the entry uses of a JetStream message (`JsMsg` of the `nats` client). */
export interface JetStreamMessage {
  readonly subject: string;
  readonly data: Uint8Array;
  readonly headers?: { get(name: string): string; keys(): string[] };
  readonly info: { deliveryCount: number };
  ackAck(): Promise<boolean>;
  nak(delayMs?: number): void;
  term(): void;
}

/**
 * The delivery of a JetStream message: the key is its `Nats-Msg-Id` header (the one JetStream
 * de-duplicates publishes by), the attempt the stream's delivery count, the payload its JSON (a
 * `{ pattern, data }` envelope, as Nest's clients publish, is read as its `data`; a body that is
 * not JSON is malformed). Settled: `ack` waits for the server to confirm the ack; `requeue` is a
 * `nak` delayed by `retryDelayMs`; `dead-letter` a `term` (the stream then publishes its
 * advisory, and never delivers the message again).
 */
export function jetStreamDelivery(message: JetStreamMessage, pattern: string): MessageDelivery {
  const headers: Record<string, string> = {};
  for (const name of message.headers?.keys() ?? []) headers[name] = message.headers!.get(name);
  let payload: { data: unknown; malformed?: string };
  try {
    const body = JSON.parse(Buffer.from(message.data).toString('utf8')) as unknown;
    const enveloped = body !== null && typeof body === 'object' && 'pattern' in body && 'data' in body;
    payload = { data: enveloped ? (body as { data: unknown }).data : body };
  } catch {
    payload = { data: undefined, malformed: 'the message body is not JSON' };
  }
  const received: ReceivedMessage = {
    transport: 'nats',
    pattern,
    id: headers['Nats-Msg-Id'] || undefined,
    headers,
    attempt: message.info.deliveryCount,
    ...payload,
  };
  return {
    message: received,
    settle: once(async (settlement, retryDelayMs) => {
      if (settlement === 'ack') {
        await message.ackAck();
        return;
      }
      if (settlement === 'requeue') return message.nak(retryDelayMs);
      message.term();
    }),
  };
}
