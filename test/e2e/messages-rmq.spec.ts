import { randomUUID } from 'node:crypto';
import { lockTable, paymentCount, sql, until, waitingOnTable } from '../support/database.js';
import { newCaller } from '../support/http.js';
import { amounts, CONSUMER_APP, gone, rmqConsumers, stats } from '../support/message-consumers.js';
import { type DemoProcess, startAppProcess, waitFor } from '../support/processes.js';
import { replyQueue, testQueue, type TestQueue } from '../support/rabbitmq.js';
import { describeWith } from '../support/services.js';

/** Idempotent consumers on the machine's RabbitMQ, through Nest's RMQ transport: exactly one effect per message key. */
describeWith('rabbitmq')('messages on RabbitMQ (Nest RMQ transport, @IdempotentMessage())', () => {
  const setup = rmqConsumers();
  let queue: TestQueue;
  beforeEach(() => (queue = setup.queue()));
  const started = setup.started;

  it('a message published three times (a publisher retrying) has one effect: the first run and acked after its commit, each duplicate acked without running', async () => {
    const consumer = await started();
    const [caller, id] = [newCaller(), randomUUID()];
    for (const answered of [{ executed: 1 }, { executed: 1, replayed: 1 }, { executed: 1, replayed: 2 }]) {
      queue.publish('payment.created', { caller, amount: 10 }, id);
      await waitFor(
        'the delivery to be answered',
        async () => JSON.stringify(await stats(consumer)) === JSON.stringify(answered),
      );
    }
    expect(await amounts(caller)).toEqual([10]);
    await consumer.stop();
    expect(await queue.counts()).toEqual({ ready: 0, dead: 0 });
  });

  it('published three times at once, it runs once: the duplicates that meet the key held are requeued, then acked without running', async () => {
    const consumer = await started();
    const [caller, id] = [newCaller(), randomUUID()];
    for (let i = 0; i < 3; i++) queue.publish('payment.created', { caller, amount: 10 }, id);
    await waitFor('the three deliveries', async () => {
      const counted = await stats(consumer);
      return counted.executed === 1 && counted.replayed === 2;
    });
    expect(await amounts(caller)).toEqual([10]);
    await consumer.stop();
    expect(await queue.counts()).toEqual({ ready: 0, dead: 0 });
  });

  it('a request-reply pattern answers a duplicate with the stored reply, and runs once', async () => {
    const consumer = await started();
    const replies = await replyQueue(queue.name, 'payment.quote');
    try {
      const [caller, id] = [newCaller(), randomUUID()];
      for (const correlationId of ['a', 'b']) {
        replies.request({ caller, amount: 21 }, id, correlationId);
        await waitFor('the reply', async () => replies.to(correlationId).length === 1);
      }
      expect([...replies.to('a'), ...replies.to('b')]).toEqual([
        { to: 'a', response: { quote: 42 }, isDisposed: true },
        { to: 'b', response: { quote: 42 }, isDisposed: true },
      ]);
      expect(await paymentCount(caller)).toBe(1);
      expect(await stats(consumer)).toEqual({ executed: 1, replayed: 1 });
    } finally {
      await replies.close();
    }
  });

  it('a request-reply duplicate that meets the key held answers nothing while it is requeued: once the first commits, each request gets one reply, the stored one', async () => {
    const consumer = await started();
    const replies = await replyQueue(queue.name, 'payment.quote');
    const locker = await lockTable('payments');
    try {
      const [caller, id] = [newCaller(), randomUUID()];
      replies.request({ caller, amount: 21 }, id, 'first');
      await until(
        async () => (await waitingOnTable('payments')) === 1,
        'the first to hold its key, waiting at its write',
      );
      replies.request({ caller, amount: 21 }, id, 'duplicate');
      await waitFor(
        'the duplicate to meet the key held twice (requeued each time)',
        async () => ((await stats(consumer))['in-progress'] ?? 0) >= 2,
      );
      await locker.query('COMMIT');
      // One channel publishes every reply, in order: once each final reply is in, so is any before it.
      await waitFor('the final replies', async () =>
        ['first', 'duplicate'].every((to) => replies.to(to).some((reply) => 'response' in reply)),
      );
      expect(replies.to('first')).toEqual([{ to: 'first', response: { quote: 42 }, isDisposed: true }]);
      expect(replies.to('duplicate')).toEqual([{ to: 'duplicate', response: { quote: 42 }, isDisposed: true }]);
      expect(await amounts(caller)).toEqual([21]);
      expect(await stats(consumer)).toMatchObject({ executed: 1, replayed: 1 });
      await consumer.stop();
      expect(await queue.counts()).toEqual({ ready: 0, dead: 0 });
    } finally {
      await locker.end().catch(() => undefined);
      await replies.close();
    }
  });

  it('a request-reply message whose handler fails answers nothing for the attempts delivered again, and one error for the last, dead-lettered', async () => {
    const consumer = await started();
    const replies = await replyQueue(queue.name, 'payment.quote');
    try {
      const caller = newCaller();
      replies.request({ caller, amount: 98, poison: true }, randomUUID(), 'poison');
      await waitFor('the message to be dead-lettered', async () => (await queue.counts()).dead === 1);
      await waitFor('its error', async () => replies.to('poison').length > 0);
      expect(await stats(consumer)).toEqual({ released: 2, 'dead-lettered': 1 });
      await consumer.stop();
      expect(replies.to('poison')).toEqual([
        { to: 'poison', err: { status: 'error', message: 'Internal server error' }, isDisposed: true },
      ]);
      expect(await amounts(caller)).toEqual([]);
    } finally {
      await replies.close();
    }
  });

  it('a consumer SIGKILLed between its commit and its ack: the broker redelivers, and the handler does not run again', async () => {
    const victim = await started();
    const [caller, id] = [newCaller(), randomUUID()];
    queue.publish('payment.created', { caller, amount: 11, kill: 'after-commit' }, id);
    await waitFor('the consumer to die after its commit', async () => gone(victim));
    expect(await amounts(caller)).toEqual([11]);
    const next = await started({ SURVIVES: '1' });
    await waitFor('the redelivery', async () => ((await stats(next)).replayed ?? 0) === 1);
    expect(await stats(next)).toEqual({ replayed: 1 });
    expect(await amounts(caller)).toEqual([11]);
    await next.stop();
    expect(await queue.counts()).toEqual({ ready: 0, dead: 0 });
  });

  it('a consumer SIGKILLed before its commit leaves nothing: the redelivery runs it once', async () => {
    const victim = await started();
    const [caller, id] = [newCaller(), randomUUID()];
    queue.publish('payment.created', { caller, amount: 12, kill: 'before-commit' }, id);
    await waitFor('the consumer to die before its commit', async () => gone(victim));
    expect(await amounts(caller)).toEqual([]);
    const next = await started({ SURVIVES: '1' });
    await waitFor('the redelivery to run', async () => ((await stats(next)).executed ?? 0) === 1);
    expect(await amounts(caller)).toEqual([12]);
    await next.stop();
    expect(await queue.counts()).toEqual({ ready: 0, dead: 0 });
  });

  it('a duplicate while another consumer holds the key is neither run nor acked: requeued, then acked as a duplicate once the first commits', async () => {
    const [a, b] = [await started(), await started()];
    const [caller, id] = [newCaller(), randomUUID()];
    queue.publish('payment.created', { caller, amount: 13, holdMs: 1_500 }, id);
    // The holder's transaction has written its payment and holds the key.
    await waitFor(
      'a consumer to hold the key',
      async () =>
        (
          await sql(
            `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction' AND backend_xid IS NOT NULL`,
          )
        ).length === 1,
    );
    queue.publish('payment.created', { caller, amount: 13, holdMs: 1_500 }, id);
    await waitFor('the duplicate to be answered', async () => {
      const [sa, sb] = [await stats(a), await stats(b)];
      return (sa.executed ?? 0) + (sb.executed ?? 0) === 1 && (sa.replayed ?? 0) + (sb.replayed ?? 0) === 1;
    });
    const [sa, sb] = [await stats(a), await stats(b)];
    expect((sa['in-progress'] ?? 0) + (sb['in-progress'] ?? 0)).toBeGreaterThanOrEqual(1);
    expect(await amounts(caller)).toEqual([13]);
  });

  it('a poison message is dead-lettered after its attempts, its writes undone each time, and the queue keeps moving', async () => {
    const consumer = await started({ MAX_ATTEMPTS: '3' });
    const caller = newCaller();
    queue.publish('payment.created', { caller, amount: 99, poison: true }, randomUUID());
    for (let amount = 1; amount <= 5; amount++) queue.publish('payment.created', { caller, amount }, randomUUID());
    await waitFor('the poison message to be dead-lettered', async () => (await queue.counts()).dead === 1);
    await waitFor('the others to run', async () => ((await stats(consumer)).executed ?? 0) === 5);
    expect(await amounts(caller)).toEqual([1, 2, 3, 4, 5]);
    const [dead] = await queue.takeDead();
    expect(JSON.parse(dead.content.toString())).toEqual({
      pattern: 'payment.created',
      data: { caller, amount: 99, poison: true },
    });
    expect(await stats(consumer)).toEqual({ executed: 5, released: 2, 'dead-lettered': 1 });
    // Delivered again, it is acked without running: its key is recorded as failed.
    queue.publish('payment.created', { caller, amount: 99, poison: true }, dead.properties.messageId as string);
    await waitFor('the copy to be acked', async () => ((await stats(consumer)).replayed ?? 0) === 1);
    expect(await amounts(caller)).toEqual([1, 2, 3, 4, 5]);
    expect(await queue.counts()).toEqual({ ready: 0, dead: 0 });
  });

  it('the same key with another payload is not run: dead-lettered, logged and counted', async () => {
    const consumer = await started();
    const [caller, id] = [newCaller(), randomUUID()];
    queue.publish('payment.created', { caller, amount: 14 }, id);
    await waitFor('the first to run', async () => (await stats(consumer)).executed === 1);
    queue.publish('payment.created', { caller, amount: 15 }, id);
    await waitFor('the other payload to be dead-lettered', async () => (await queue.counts()).dead === 1);
    expect(await stats(consumer)).toEqual({ executed: 1, mismatch: 1 });
    expect(consumer.output()).toMatch(
      /MessagesController\.created: a rmq message came with a key already used for another payload/,
    );
    expect(await amounts(caller)).toEqual([14]);
  });

  // AMQP's message-id holds at most 255 characters: a longer key comes only from a key function (the NATS suite sends one).
  it('a message with no id is dead-lettered with a clear error, counted, and nothing is written', async () => {
    const consumer = await started();
    const caller = newCaller();
    queue.publish('payment.created', { caller, amount: 1 });
    await waitFor('it to be dead-lettered', async () => (await queue.counts()).dead === 1);
    expect(await stats(consumer)).toEqual({ malformed: 1 });
    expect(consumer.output()).toMatch(
      /MessagesController\.created: a malformed rmq message was dead-lettered: the message has no key/,
    );
    expect(await amounts(caller)).toEqual([]);
  });
});

describeWith('rabbitmq')(
  'messages on RabbitMQ, a consumer written by hand (amqplib, IdempotentMessages.consumeDelivery)',
  () => {
    let queue: TestQueue;
    let manual: TestQueue;
    let consumer: DemoProcess;
    beforeAll(async () => {
      [queue, manual] = [await testQueue(), await testQueue('idempotency-manual')];
      consumer = await startAppProcess(CONSUMER_APP, {
        TRANSPORT: 'rmq',
        QUEUE: queue.name,
        MAX_ATTEMPTS: '3',
        MANUAL_QUEUE: manual.name,
      });
    });
    afterAll(async () => {
      await consumer?.kill();
      await queue?.close();
      await manual?.close();
    });

    it('runs a message once however often it is published, and dead-letters a body that is not JSON, counted, nothing written', async () => {
      const [caller, id] = [newCaller(), randomUUID()];
      for (const answered of [{ executed: 1 }, { executed: 1, replayed: 1 }, { executed: 1, replayed: 2 }]) {
        manual.publish('ignored', undefined, id, Buffer.from(JSON.stringify({ caller, amount: 7 })));
        await waitFor(
          'the delivery to be answered',
          async () => JSON.stringify(await stats(consumer)) === JSON.stringify(answered),
        );
      }
      manual.publish('ignored', undefined, randomUUID(), Buffer.from('{"caller": not json'));
      await waitFor('the malformed one to be counted', async () => (await stats(consumer)).malformed === 1);
      // The count comes before the consumer's nack reaches the broker: the dead letter is waited for.
      await waitFor('the malformed one to be dead-lettered', async () => (await manual.counts()).dead === 1);
      expect(await amounts(caller)).toEqual([7]);
      expect(await manual.counts()).toEqual({ ready: 0, dead: 1 });
      expect(consumer.output()).toMatch(
        /ManualConsumer\.payment: a malformed rmq message was dead-lettered: the message body is not JSON/,
      );
    });
  },
);
