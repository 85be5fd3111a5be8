import type { Duration } from './duration.js';

/** A message as a relay hands it to a publisher. */
export interface OutboxMessage {
  /** The message's id, the same on every re-publish: AMQP `message-id`, JetStream `Nats-Msg-Id`. */
  readonly id: string;
  /** The queue or routing key (RabbitMQ), the subject (JetStream). */
  readonly destination: string;
  readonly payload: Buffer;
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * Publishes the outbox's messages to one broker: `publish()` resolves once the broker has the
 * message (a publisher confirm, a JetStream ack; a duplicate the broker dropped counts as
 * delivered) and rejects otherwise; the relay tries a rejected message again later.
 * `rabbitMqPublisher()` and `jetStreamPublisher()` are the module's.
 */
export interface OutboxPublisher {
  publish(message: OutboxMessage): Promise<void>;
}

/** The outbox: where staged messages go, and how the relay sends them (docs/outbox.md). */
export interface OutboxOptions {
  /** The brokers, by the name a staged message gives (`stage({ to })`); the only one is the default. */
  publishers: Record<string, OutboxPublisher>;
  /** Whether this instance relays (publishes what any instance staged). Default: `true`. */
  relay?: boolean;
  /** How often an idle relay looks for messages it was not told of (another instance's). Default: `'1s'`. */
  pollInterval?: Duration;
  /** Messages claimed (and published side by side) at a time. Default: `100`. */
  batchSize?: number;
  /**
   * How long a relay's claim on a message lasts: another relay takes a message whose claim ended
   * unsent (its relay died), and a publish that has not finished by then is given up. Default: `'30s'`.
   */
  claim?: Duration;
  /** The wait before a message whose publish failed is tried again, doubled per attempt up to 60 s. Default: `'1s'`. */
  retryDelay?: Duration;
  /** How long sent messages stay in the table before the sweeper deletes them. Default: `'1h'`. */
  keepSent?: Duration;
}

/** The outbox's options, resolved. */
export interface OutboxSettings {
  publishers: ReadonlyMap<string, OutboxPublisher>;
  relay: boolean;
  pollIntervalMs: number;
  batchSize: number;
  claimMs: number;
  retryDelayMs: number;
  keepSentMs: number;
}
