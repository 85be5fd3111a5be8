import amqplib, { type Channel, type ChannelModel, type GetMessage } from 'amqplib';
import { randomUUID } from 'node:crypto';

export const RABBITMQ_URL = process.env.RABBITMQ_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

/**
 * A queue of this test run's own on the machine's RabbitMQ, with its dead-letter queue (`.dead`,
 * through the default exchange), declared as the consumer app declares it; removed by `close()`.
 */
export interface TestQueue {
  name: string;
  /** Publishes Nest's `{ pattern, data }` envelope (or `raw` bytes as they are), with `messageId` when given. */
  publish(pattern: string, data: unknown, messageId?: string, raw?: Buffer): void;
  /** Messages waiting (not delivered or delivered and given back) in the queue, and in its dead-letter queue. */
  counts(): Promise<{ ready: number; dead: number }>;
  /** The messages in the dead-letter queue, taken off it. */
  takeDead(): Promise<GetMessage[]>;
  close(): Promise<void>;
}

export async function testQueue(prefix = 'idempotency-test'): Promise<TestQueue> {
  const connection: ChannelModel = await amqplib.connect(RABBITMQ_URL);
  const channel: Channel = await connection.createChannel();
  const name = `${prefix}.${randomUUID()}`;
  await channel.assertQueue(`${name}.dead`, { durable: true });
  await channel.assertQueue(name, {
    durable: true,
    arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': `${name}.dead` },
  });
  return {
    name,
    publish(pattern, data, messageId, raw) {
      const body = raw ?? Buffer.from(JSON.stringify({ pattern, data }));
      channel.sendToQueue(name, body, {
        persistent: true,
        contentType: 'application/json',
        ...(messageId === undefined ? {} : { messageId }),
      });
    },
    async counts() {
      const [queue, dead] = [await channel.checkQueue(name), await channel.checkQueue(`${name}.dead`)];
      return { ready: queue.messageCount, dead: dead.messageCount };
    },
    async takeDead() {
      const taken: GetMessage[] = [];
      for (
        let message = await channel.get(`${name}.dead`, { noAck: true });
        message;
        message = await channel.get(`${name}.dead`, { noAck: true })
      ) {
        taken.push(message);
      }
      return taken;
    },
    async close() {
      await channel.deleteQueue(name).catch(() => undefined);
      await channel.deleteQueue(`${name}.dead`).catch(() => undefined);
      await connection.close().catch(() => undefined);
    },
  };
}

/** A reply that came to a `replyQueue()`: its correlation id (`to`) and what Nest's server sent. */
export type Reply = { to: string } & Record<string, unknown>;

/**
 * A reply queue of the test's own, read with amqplib (a ClientProxy keeps only the first reply of
 * a correlation id): `request()` publishes a `pattern` request to `queue` with its own correlation
 * id, and `to(id)` is every reply that came for it, in order.
 */
export async function replyQueue(queue: string, pattern: string) {
  const connection = await amqplib.connect(RABBITMQ_URL);
  const channel = await connection.createChannel();
  const { queue: replyTo } = await channel.assertQueue('', { exclusive: true });
  const replies: Reply[] = [];
  await channel.consume(
    replyTo,
    (message) =>
      message && replies.push({ to: message.properties.correlationId, ...JSON.parse(message.content.toString()) }),
    { noAck: true },
  );
  return {
    request(data: unknown, messageId: string, correlationId: string) {
      channel.sendToQueue(queue, Buffer.from(JSON.stringify({ pattern, data, id: correlationId })), {
        messageId,
        replyTo,
        correlationId,
      });
    },
    to: (correlationId: string): Reply[] => replies.filter((reply) => reply.to === correlationId),
    close: () => connection.close().catch(() => undefined),
  };
}
