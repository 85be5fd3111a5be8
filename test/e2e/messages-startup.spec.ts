import { randomUUID } from 'node:crypto';
import { newCaller } from '../support/http.js';
import { type TestStream, testStream } from '../support/jetstream.js';
import { amounts, CONSUMER_APP, rmqConsumers, stats } from '../support/message-consumers.js';
import { type DemoProcess, startAppProcess, waitFor } from '../support/processes.js';
import { describeWith } from '../support/services.js';

/** Messages waiting when the consumer starts: enough to reach it before its module is initialised. */
const BACKLOG = 60;

const amountsUpTo = (count: number) => Array.from({ length: count }, (_, index) => index + 1);

/**
 * The consumer app starts its microservice before `app.listen()` (a hybrid app's usual order), so
 * the transport consumes before the app's modules are initialised. Every delivery taken then must
 * wait for the module, never fail: a failure is an error line, a requeue and a second delivery.
 */
describe('consumers take no message before the module is ready, in whatever order the app starts its listeners', () => {
  describeWith('rabbitmq')('on RabbitMQ (Nest RMQ transport)', () => {
    const setup = rmqConsumers({ HOST: 'typeorm' });

    it(`a backlog of ${BACKLOG} waiting at startup: each message runs once, and no delivery fails`, async () => {
      const queue = setup.queue();
      const caller = newCaller();
      for (const amount of amountsUpTo(BACKLOG)) queue.publish('payment.created', { caller, amount }, randomUUID());
      await waitFor('the backlog in the queue', async () => (await queue.counts()).ready === BACKLOG);
      const consumer = await setup.started();
      await waitFor('the backlog consumed', async () => (await stats(consumer)).executed === BACKLOG);
      expect(await amounts(caller)).toEqual(amountsUpTo(BACKLOG));
      expect(await stats(consumer)).toEqual({ executed: BACKLOG });
      expect(consumer.output()).not.toMatch(/ERROR/);
    });
  });

  describeWith('nats')('on NATS JetStream (JetStreamServer)', () => {
    let stream: TestStream;
    let consumer: DemoProcess | undefined;
    beforeEach(async () => (stream = await testStream()));
    afterEach(async () => {
      await consumer?.kill().catch(() => undefined);
      await stream.close();
    });

    it(`a backlog of ${BACKLOG} waiting at startup: each message runs once, and no delivery fails`, async () => {
      const caller = newCaller();
      for (const amount of amountsUpTo(BACKLOG))
        await stream.publish('payment.created', { caller, amount }, randomUUID());
      consumer = await startAppProcess(CONSUMER_APP, {
        TRANSPORT: 'nats',
        HOST: 'typeorm',
        STREAM: stream.name,
        DURABLE: stream.durable,
        PATTERN_PREFIX: stream.prefix,
        MAX_ATTEMPTS: '3',
      });
      const started = consumer;
      await waitFor('the backlog consumed', async () => (await stats(started)).executed === BACKLOG);
      expect(await amounts(caller)).toEqual(amountsUpTo(BACKLOG));
      expect(await stats(started)).toEqual({ executed: BACKLOG });
      expect(started.output()).not.toMatch(/ERROR/);
    });
  });
});
