import { BaseRpcContext, type CustomTransportStrategy, Server } from '@nestjs/microservices';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  AckPolicy,
  connect,
  type Consumer,
  type ConsumerMessages,
  DeliverPolicy,
  nanos,
  type NatsConnection,
} from 'nats';
import { isObservable, lastValueFrom } from 'rxjs';
import type { MessageDelivery } from '../transports/message-delivery.js';
import { jetStreamDelivery, type JetStreamMessage } from './jetstream-delivery.js';

const DEFAULT_ACK_WAIT_MS = 30_000;
const DEFAULT_MAX_IN_FLIGHT = 16;
/** How long one fetch waits on the server for messages before the next is sent. */
const FETCH_EXPIRES_MS = 5_000;

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
  /**
   * Handlers of each pattern that run at once in this process; messages are fetched only for the
   * free ones, so the process holds at most this many of the pattern unacknowledged. Default: 16.
   */
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
  /** The fetches waiting for messages, stopped at close. */
  private readonly fetching = new Set<ConsumerMessages>();
  /** Every handler running, which close waits for. */
  private readonly inFlight = new Set<Promise<void>>();
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
      await manager.streams
        .info(this.options.stream)
        .catch(() => manager.streams.add({ name: this.options.stream, subjects: this.options.subjects ?? patterns }));
      for (const pattern of patterns) {
        const durable = `${this.options.durable}_${pattern.replace(/[^A-Za-z0-9_-]/g, '_')}`;
        await manager.consumers.add(this.options.stream, {
          durable_name: durable,
          filter_subject: pattern,
          ack_policy: AckPolicy.Explicit,
          deliver_policy: DeliverPolicy.All,
          ack_wait: nanos(this.options.ackWaitMs ?? DEFAULT_ACK_WAIT_MS),
          max_deliver: -1,
        });
        const consumer = await connection.jetstream().consumers.get(this.options.stream, durable);
        void this.serve(consumer, pattern);
      }
      callback();
    } catch (error) {
      callback(error);
    }
  }

  /**
   * Stops fetching, waits for the handlers in flight (no longer than `ackWaitMs`, after which
   * JetStream delivers their messages again anyway), then drains the connection.
   */
  async close(): Promise<void> {
    this.closing = true;
    for (const batch of this.fetching) batch.stop();
    const handlers = Promise.allSettled(this.inFlight);
    await Promise.race([handlers, sleep(this.options.ackWaitMs ?? DEFAULT_ACK_WAIT_MS, undefined, { ref: false })]);
    await this.connection?.drain().catch(() => undefined);
    this.connection = undefined;
  }

  on(): void {}

  unwrap<T>(): T {
    return this.connection as T;
  }

  /**
   * Hands the messages of `pattern` to its handler until the server closes: at most `maxInFlight`
   * run at once, and messages are fetched only for the handlers free to take them, so that the
   * process holds no more than that unacknowledged beside them. A fetch that fails (an error of
   * the client or the stream) is logged and tried again a second later, so that a pattern never
   * stops being served without a word.
   */
  private async serve(consumer: Consumer, pattern: string): Promise<void> {
    const most = this.options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT;
    const running = new Set<Promise<void>>();
    while (!this.closing) {
      try {
        while (running.size >= most) await Promise.race(running);
        const batch = await consumer.fetch({ max_messages: most - running.size, expires: FETCH_EXPIRES_MS });
        this.fetching.add(batch);
        try {
          for await (const message of batch) {
            const handled: Promise<void> = this.handle(message as unknown as JetStreamMessage, pattern).finally(() => {
              running.delete(handled);
              this.inFlight.delete(handled);
            });
            running.add(handled);
            this.inFlight.add(handled);
          }
        } finally {
          this.fetching.delete(batch);
        }
      } catch (error) {
        if (this.closing) return;
        this.logger.error(
          `${pattern}: fetching failed (${(error as Error)?.message ?? String(error)}); tried again in 1 s`,
        );
        await sleep(1_000);
      }
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
      this.logger.error(
        `${pattern}: delivery ${message.info.deliveryCount} failed${last ? ', terminated' : ''}: ${(error as Error)?.message ?? String(error)}`,
      );
      await delivery
        .settle(last ? 'dead-letter' : 'requeue', this.options.retryDelayMs ?? 1_000, true)
        .catch(() => undefined);
    }
  }
}
