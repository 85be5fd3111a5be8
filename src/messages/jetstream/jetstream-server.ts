import { BaseRpcContext, type CustomTransportStrategy, Server } from '@nestjs/microservices';
import { setTimeout as sleep } from 'node:timers/promises';
import { AckPolicy, connect, type Consumer, type ConsumerMessages, DeliverPolicy, type NatsConnection, nanos } from 'nats';
import { isObservable, lastValueFrom } from 'rxjs';
import type { MessageDelivery } from '../transports/message-delivery.js';
import { type JetStreamMessage, jetStreamDelivery } from './jetstream-delivery.js';

/** Options of `JetStreamServer`. */
export interface JetStreamServerOptions {
  /** The NATS servers (`nats://127.0.0.1:4222`). */
  servers: string | string[];
  /** The stream the handlers' subjects are in; created with `subjects` when it does not exist. */
  stream: string;
  /** The stream's subjects, when the server creates it. Default: every handler's pattern. */
  subjects?: string[];
  /** Prefix of the durable consumer of each pattern (one per pattern: competing consumers share it). */
  durable: string;
  /** How long JetStream waits for an ack before it delivers a message again. Default: 30 s. */
  ackWaitMs?: number;
  /** Messages each pattern's consumer holds at once. Default: 16. */
  maxInFlight?: number;
  /** For handlers without `@IdempotentMessage()`: deliveries before a failing message is terminated. Default: 5. */
  maxDeliver?: number;
  /** For handlers without `@IdempotentMessage()`: the delay before a failed message is delivered again. Default: 1 s. */
  retryDelayMs?: number;
}

/** The context of a JetStream delivery: the message, its subject, and the delivery the message entry settles. */
export class JetStreamContext extends BaseRpcContext<[JetStreamMessage, string, MessageDelivery]> {
  getMessage(): JetStreamMessage {
    return this.args[0];
  }

  getSubject(): string {
    return this.args[1];
  }

  /** The delivery as the message entry (`@IdempotentMessage()`) reads and settles it. */
  delivery(): MessageDelivery {
    return this.args[2];
  }
}

/**
 * A Nest microservice transport over NATS JetStream, with acknowledgements (Nest's own NATS
 * transport is core NATS: no acks, no redelivery): `app.connectMicroservice({ strategy: new
 * JetStreamServer({ servers, stream, durable }) })`. Each `@EventPattern()` / `@MessagePattern()`
 * pattern is a subject, consumed by a durable pull consumer of its own (explicit acks; every
 * process with the same `durable` shares it, as competing consumers). A handler marked
 * `@IdempotentMessage()` settles its messages itself, after its outcome is recorded; any other is
 * acked once it returns, and a failing one delivered again after `retryDelayMs`, then terminated
 * after `maxDeliver` deliveries. Replies are not sent (JetStream has no reply subject for
 * stream messages).
 */
export class JetStreamServer extends Server implements CustomTransportStrategy {
  override readonly transportId = Symbol.for('nestjs-pg-idempotency:jetstream');
  private connection?: NatsConnection;
  private readonly consumers: ConsumerMessages[] = [];
  private closing = false;

  constructor(private readonly options: JetStreamServerOptions) {
    super();
    // A handler's error reaches this transport, which decides its message's redelivery (NestJS 12
    // swallows an event handler's error unless its server says so; NestJS 11 always passes it on).
    (this as { propagatesEventHandlerErrors?: boolean }).propagatesEventHandlerErrors = true;
  }

  async listen(callback: (error?: unknown) => void): Promise<void> {
    this.closing = false;
    try {
      const connection = (this.connection = await connect({ servers: this.options.servers }));
      const manager = await connection.jetstreamManager();
      const patterns = [...this.messageHandlers.keys()];
      await manager.streams.info(this.options.stream).catch(() => manager.streams.add({ name: this.options.stream, subjects: this.options.subjects ?? patterns }));
      for (const pattern of patterns) {
        const durable = `${this.options.durable}_${pattern.replace(/[^A-Za-z0-9_-]/g, '_')}`;
        await manager.consumers.add(this.options.stream, {
          durable_name: durable,
          filter_subject: pattern,
          ack_policy: AckPolicy.Explicit,
          deliver_policy: DeliverPolicy.All,
          ack_wait: nanos(this.options.ackWaitMs ?? 30_000),
          max_deliver: -1,
        });
        const consumer = await connection.jetstream().consumers.get(this.options.stream, durable);
        void this.serve(consumer, await this.consume(consumer), pattern);
      }
      callback();
    } catch (error) {
      callback(error);
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    for (const messages of this.consumers.splice(0)) messages.stop();
    await this.connection?.drain().catch(() => undefined);
    this.connection = undefined;
  }

  on(): void {}

  unwrap<T>(): T {
    return this.connection as T;
  }

  private async consume(consumer: Consumer): Promise<ConsumerMessages> {
    const messages = await consumer.consume({ max_messages: this.options.maxInFlight ?? 16 });
    this.consumers.push(messages);
    return messages;
  }

  /**
   * Hands each message of `pattern` to its handler until the server closes. Consuming that stops
   * on its own (an error of the client or the stream) is logged and started again a second later,
   * so that a pattern never stops being served without a word.
   */
  private async serve(consumer: Consumer, first: ConsumerMessages, pattern: string): Promise<void> {
    let messages: ConsumerMessages | undefined = first;
    while (!this.closing) {
      try {
        messages ??= await this.consume(consumer);
        for await (const message of messages) void this.handle(message as unknown as JetStreamMessage, pattern);
        if (this.closing) return;
        this.logger.error(`${pattern}: consuming stopped; started again in 1 s`);
      } catch (error) {
        if (this.closing) return;
        this.logger.error(`${pattern}: consuming failed (${(error as Error)?.message ?? String(error)}); started again in 1 s`);
      }
      const at = messages ? this.consumers.indexOf(messages) : -1;
      if (at >= 0) this.consumers.splice(at, 1);
      messages = undefined;
      await sleep(1_000);
    }
  }

  private async handle(message: JetStreamMessage, pattern: string): Promise<void> {
    const handler = this.messageHandlers.get(pattern)!;
    const delivery = jetStreamDelivery(message, pattern);
    try {
      const answer = await handler(delivery.message.data, new JetStreamContext([message, pattern, delivery]));
      if (isObservable(answer)) await lastValueFrom(answer, { defaultValue: undefined });
      await delivery.settle('ack', 0, false);
    } catch (error) {
      const last = message.info.deliveryCount >= (this.options.maxDeliver ?? 5);
      this.logger.error(`${pattern}: delivery ${message.info.deliveryCount} failed${last ? ', terminated' : ''}: ${(error as Error)?.message ?? String(error)}`);
      await delivery.settle(last ? 'dead-letter' : 'requeue', this.options.retryDelayMs ?? 1_000, true).catch(() => undefined);
    }
  }
}
