/**
 * A message as the message entry reads it, whatever broker delivered it: what a transport's
 * delivery (`transports/`) or a hand-written consumer gives `IdempotentMessages`.
 */
export interface ReceivedMessage {
  /** The transport, for events and metrics: `rmq`, `nats`, or a name of the app's own. */
  readonly transport: string;
  /** The pattern (routing key, subject) the handler serves: part of the key's scope. */
  readonly pattern: string;
  /** The broker's id for the message (AMQP `message-id`, NATS `Nats-Msg-Id`), if it carries one. */
  readonly id?: string;
  /** The message's headers (AMQP properties' headers, NATS headers), as text. */
  readonly headers: Readonly<Record<string, string>>;
  /** The message's payload, parsed (JSON); `undefined` when `malformed` says why it could not be. */
  readonly data: unknown;
  /** Why the payload could not be read (not JSON), if it could not. */
  readonly malformed?: string;
  /** Which delivery of the message this is, counting from 1 (the broker's count where it keeps one). */
  readonly attempt: number;
}
