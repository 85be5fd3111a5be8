import { randomUUID } from 'node:crypto';
import {
  connect,
  type JetStreamClient,
  type JetStreamManager,
  nanos,
  type NatsConnection,
  headers as natsHeaders,
} from 'nats';

export const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

/**
 * A JetStream stream of this test run's own on the machine's NATS, whose subjects carry a prefix
 * of the run's own (`prefix`: the consumer app's PATTERN_PREFIX), with a short duplicate window
 * (so that a publisher's retry past it reaches the consumer, as one after a timeout does);
 * removed by `close()`.
 */
export interface TestStream {
  name: string;
  prefix: string;
  durable: string;
  /** Publishes Nest's `{ pattern, data }` envelope (or `raw` bytes), with `Nats-Msg-Id` when given. */
  publish(pattern: string, data: unknown, messageId?: string, raw?: Uint8Array): Promise<void>;
  /** Messages the stream holds, and those its consumers have not acked yet. */
  pending(): Promise<number>;
  /** Messages delivered to its consumers and not acked yet. */
  ackPending(): Promise<number>;
  close(): Promise<void>;
}

/** The duplicate window of the test streams. */
export const DUPLICATE_WINDOW_MS = 200;

/**
 * How long a publish waits for the stream's acknowledgement: a busy machine (two consumers and
 * PostgreSQL on two cores) answers slower than the client's 5 s default. A publish is never
 * retried: past the duplicate window a retry is a second delivery.
 */
const PUBLISH_ACK_MS = 60_000;

export async function testStream(): Promise<TestStream> {
  const connection: NatsConnection = await connect({ servers: NATS_URL });
  const manager: JetStreamManager = await connection.jetstreamManager();
  const client: JetStreamClient = connection.jetstream();
  const run = `t${randomUUID().replace(/-/g, '')}`;
  const name = `idempotency_${run}`;
  const prefix = `${run}.`;
  await manager.streams.add({ name, subjects: [`${prefix}>`], duplicate_window: nanos(DUPLICATE_WINDOW_MS) });
  return {
    name,
    prefix,
    durable: `consumer_${run}`,
    async publish(pattern, data, messageId, raw) {
      const carried = natsHeaders();
      if (messageId !== undefined) carried.set('Nats-Msg-Id', messageId);
      await client.publish(
        `${prefix}${pattern}`,
        raw ?? new TextEncoder().encode(JSON.stringify({ pattern: `${prefix}${pattern}`, data })),
        {
          headers: messageId === undefined ? undefined : carried,
          timeout: PUBLISH_ACK_MS,
        },
      );
    },
    async pending() {
      let left = 0;
      for await (const consumer of manager.consumers.list(name))
        left += consumer.num_pending + consumer.num_ack_pending;
      return left;
    },
    async ackPending() {
      let unacked = 0;
      for await (const consumer of manager.consumers.list(name)) unacked += consumer.num_ack_pending;
      return unacked;
    },
    async close() {
      await manager.streams.delete(name).catch(() => undefined);
      await connection.drain().catch(() => undefined);
    },
  };
}
