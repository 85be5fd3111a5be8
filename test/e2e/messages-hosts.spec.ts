import { randomUUID } from 'node:crypto';
import { newCaller } from '../support/http.js';
import { amounts, gone, rmqConsumers, stats } from '../support/message-consumers.js';
import { waitFor } from '../support/processes.js';
import { describeWith } from '../support/services.js';

/**
 * The message guarantees on every host a consumer writes through (the RMQ transport; the
 * broker-specific cases are in messages-rmq.spec.ts and messages-nats.spec.ts, on Drizzle):
 * one effect per key, a failing handler's writes undone with the key's transaction, a consumer
 * killed before its commit leaving nothing; and lease mode, whose writes commit on their own.
 */

/** Published three times, one after the other: one effect, the first run, each duplicate acked without running. */
async function publishedThreeTimes(setup: ReturnType<typeof rmqConsumers>): Promise<void> {
  const consumer = await setup.started();
  const [caller, id] = [newCaller(), randomUUID()];
  for (const answered of [{ executed: 1 }, { executed: 1, replayed: 1 }, { executed: 1, replayed: 2 }]) {
    setup.queue().publish('payment.created', { caller, amount: 10 }, id);
    await waitFor(
      'the delivery to be answered',
      async () => JSON.stringify(await stats(consumer)) === JSON.stringify(answered),
    );
  }
  expect(await amounts(caller)).toEqual([10]);
  await consumer.stop();
  expect(await setup.queue().counts()).toEqual({ ready: 0, dead: 0 });
}

describeWith('rabbitmq').each(['typeorm', 'cls', 'prisma'] as const)(
  'messages on the %s host (RabbitMQ, @IdempotentMessage())',
  (host) => {
    const setup = rmqConsumers({ HOST: host });

    it('a message published three times has one effect: run once, each duplicate acked without running', () =>
      publishedThreeTimes(setup));

    it("a handler that writes then throws leaves no rows: each attempt's write rolls back with the key, then the message is dead-lettered", async () => {
      const consumer = await setup.started();
      const caller = newCaller();
      setup.queue().publish('payment.created', { caller, amount: 99, poison: true }, randomUUID());
      setup.queue().publish('payment.created', { caller, amount: 1 }, randomUUID());
      await waitFor('the poison message to be dead-lettered', async () => (await setup.queue().counts()).dead === 1);
      await waitFor('the other to run', async () => ((await stats(consumer)).executed ?? 0) === 1);
      expect(await amounts(caller)).toEqual([1]);
      expect(await stats(consumer)).toEqual({ executed: 1, released: 2, 'dead-lettered': 1 });
    });

    it('a consumer SIGKILLed before its commit leaves nothing: the redelivery runs it once', async () => {
      const victim = await setup.started();
      const [caller, id] = [newCaller(), randomUUID()];
      setup.queue().publish('payment.created', { caller, amount: 12, kill: 'before-commit' }, id);
      await waitFor('the consumer to die before its commit', async () => gone(victim));
      expect(await amounts(caller)).toEqual([]);
      const next = await setup.started({ SURVIVES: '1' });
      await waitFor('the redelivery to run', async () => ((await stats(next)).executed ?? 0) === 1);
      expect(await amounts(caller)).toEqual([12]);
      await next.stop();
      expect(await setup.queue().counts()).toEqual({ ready: 0, dead: 0 });
    });
  },
);

describeWith('rabbitmq')('messages in lease mode (RabbitMQ, @IdempotentMessage({ mode: "lease" }), Drizzle)', () => {
  const setup = rmqConsumers({ MODE: 'lease' });

  it('a message published three times has one effect: run once, each duplicate acked without running', () =>
    publishedThreeTimes(setup));

  it("a failing handler's writes are its own (outside the key's transaction): each attempt's stays, the key is released, and after its attempts the message is dead-lettered", async () => {
    const consumer = await setup.started();
    const caller = newCaller();
    setup.queue().publish('payment.created', { caller, amount: 99, poison: true }, randomUUID());
    await waitFor('the poison message to be dead-lettered', async () => (await setup.queue().counts()).dead === 1);
    expect(await amounts(caller)).toEqual([99, 99, 99]);
    expect(await stats(consumer)).toEqual({ released: 2, 'dead-lettered': 1 });
  });
});
