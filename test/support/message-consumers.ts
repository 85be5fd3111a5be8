import { sql } from './database.js';
import { type TestStream, testStream } from './jetstream.js';
import { type DemoProcess, startAppProcess } from './processes.js';
import { type TestQueue, testQueue } from './rabbitmq.js';

/** The consumer app the message suites start as processes (`test/e2e/message-consumer.app.mjs`). */
export const CONSUMER_APP = 'test/e2e/message-consumer.app.mjs';

/**
 * The message events a consumer process counted, by type. A connection reset while the process
 * runs (a kept-alive socket the server closed as it was reused) is asked again; a process that
 * died fails with its output.
 */
export async function stats(consumer: DemoProcess): Promise<Record<string, number>> {
  for (let attempt = 1; ; attempt++) {
    try {
      return (await (await fetch(`${consumer.url}/stats`)).json()) as Record<string, number>;
    } catch (error) {
      if (gone(consumer)) throw new Error(`the consumer process died:\n${consumer.output()}`, { cause: error });
      if (attempt === 3) throw error;
    }
  }
}

/** The amounts of the caller's payments, in order: one row per effect. */
export async function amounts(caller: string): Promise<number[]> {
  return (await sql<{ amount: number }>('SELECT amount FROM payments WHERE caller = $1 ORDER BY amount', [caller])).map(
    (row) => row.amount,
  );
}

/** Whether the consumer process has died (it SIGKILLs itself in the kill scenarios). */
export function gone(consumer: DemoProcess): boolean {
  return consumer.child.exitCode !== null || consumer.child.signalCode !== null;
}

/**
 * A queue of its own for each test of the calling `describe`, and consumer processes of the
 * consumer app on it (`env` over `TRANSPORT=rmq`, `MAX_ATTEMPTS=3`), killed after each test.
 */
export function rmqConsumers(env: Record<string, string> = {}) {
  let queue: TestQueue;
  const consumers: DemoProcess[] = [];
  beforeEach(async () => (queue = await testQueue()));
  afterEach(async () => {
    await Promise.all(consumers.splice(0).map((consumer) => consumer.kill().catch(() => undefined)));
    await queue.close();
  });
  return {
    queue: () => queue,
    async started(more: Record<string, string> = {}) {
      const consumer = await startAppProcess(CONSUMER_APP, {
        TRANSPORT: 'rmq',
        QUEUE: queue.name,
        MAX_ATTEMPTS: '3',
        ...env,
        ...more,
      });
      consumers.push(consumer);
      return consumer;
    },
  };
}

/**
 * A JetStream stream of its own for each test of the calling `describe`, and consumer processes of
 * the consumer app on it (`env` over `TRANSPORT=nats`, the stream, its durable consumer and subject
 * prefix, `MAX_ATTEMPTS=3`, `ACK_WAIT_MS=2000`), killed after each test.
 */
export function jetStreamConsumers(env: Record<string, string> = {}) {
  let stream: TestStream;
  const consumers: DemoProcess[] = [];
  beforeEach(async () => (stream = await testStream()));
  afterEach(async () => {
    await Promise.all(consumers.splice(0).map((consumer) => consumer.kill().catch(() => undefined)));
    await stream.close();
  });
  return {
    stream: () => stream,
    async started(more: Record<string, string> = {}) {
      const consumer = await startAppProcess(CONSUMER_APP, {
        TRANSPORT: 'nats',
        STREAM: stream.name,
        DURABLE: stream.durable,
        PATTERN_PREFIX: stream.prefix,
        MAX_ATTEMPTS: '3',
        ACK_WAIT_MS: '2000',
        ...env,
        ...more,
      });
      consumers.push(consumer);
      return consumer;
    },
  };
}
