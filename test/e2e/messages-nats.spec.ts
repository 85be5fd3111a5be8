import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { newCaller } from '../support/http.js';
import { DUPLICATE_WINDOW_MS, type TestStream } from '../support/jetstream.js';
import { amounts, gone, jetStreamConsumers, stats } from '../support/message-consumers.js';
import { waitFor } from '../support/processes.js';
import { describeWith } from '../support/services.js';

/** Past the stream's duplicate window: JetStream takes the same id again, as after a publisher's timeout. */
const pastDuplicateWindow = () => sleep(DUPLICATE_WINDOW_MS + 100);

/** Idempotent consumers on the machine's NATS JetStream, through JetStreamServer: exactly one effect per message key. */
describeWith('nats')('messages on NATS JetStream (JetStreamServer, @IdempotentMessage())', () => {
  const setup = jetStreamConsumers();
  let stream: TestStream;
  beforeEach(() => (stream = setup.stream()));
  const started = setup.started;

  it("a message published three times (past the stream's duplicate window) has one effect: the first run and acked after its commit, each duplicate acked without running", async () => {
    const consumer = await started();
    const [caller, id] = [newCaller(), randomUUID()];
    for (const answered of [{ executed: 1 }, { executed: 1, replayed: 1 }, { executed: 1, replayed: 2 }]) {
      await pastDuplicateWindow();
      await stream.publish('payment.created', { caller, amount: 10 }, id);
      await waitFor(
        'the delivery to be answered',
        async () => JSON.stringify(await stats(consumer)) === JSON.stringify(answered),
      );
    }
    expect(await amounts(caller)).toEqual([10]);
    await waitFor('every delivery acked', async () => (await stream.pending()) === 0);
  });

  it('a consumer SIGKILLed between its commit and its ack: JetStream redelivers, and the handler does not run again', async () => {
    const victim = await started();
    const [caller, id] = [newCaller(), randomUUID()];
    await stream.publish('payment.created', { caller, amount: 11, kill: 'after-commit' }, id);
    await waitFor('the consumer to die after its commit', async () => gone(victim));
    expect(await amounts(caller)).toEqual([11]);
    const next = await started({ SURVIVES: '1' });
    await waitFor(
      'the redelivery (after the ack wait)',
      async () => ((await stats(next)).replayed ?? 0) === 1,
      undefined,
      async () =>
        `stats ${JSON.stringify(await stats(next))}; pending ${await stream.pending()}, unacked ${await stream.ackPending()}\n` +
        `the consumer killed:\n${victim.output()}\nthe next consumer:\n${next.output()}`,
    );
    expect(await stats(next)).toEqual({ replayed: 1 });
    expect(await amounts(caller)).toEqual([11]);
    await waitFor('every delivery acked', async () => (await stream.pending()) === 0);
  });

  it('a consumer SIGKILLed before its commit leaves nothing: the redelivery runs it once', async () => {
    const victim = await started();
    const [caller, id] = [newCaller(), randomUUID()];
    await stream.publish('payment.created', { caller, amount: 12, kill: 'before-commit' }, id);
    await waitFor('the consumer to die before its commit', async () => gone(victim));
    expect({ signal: victim.child.signalCode, output: victim.output() }).toEqual({
      signal: 'SIGKILL',
      output: expect.any(String),
    });
    expect(await amounts(caller)).toEqual([]);
    const next = await started({ SURVIVES: '1' });
    await waitFor('the redelivery to run', async () => ((await stats(next)).executed ?? 0) === 1);
    expect(await amounts(caller)).toEqual([12]);
    await waitFor('every delivery acked', async () => (await stream.pending()) === 0);
  });

  it('a poison message is terminated after its attempts, its writes undone each time, and the stream keeps moving', async () => {
    const consumer = await started();
    const caller = newCaller();
    const poison = randomUUID();
    await stream.publish('payment.created', { caller, amount: 99, poison: true }, poison);
    for (let amount = 1; amount <= 5; amount++)
      await stream.publish('payment.created', { caller, amount }, randomUUID());
    await waitFor('the poison message to be dead-lettered and the others run', async () => {
      const counted = await stats(consumer);
      return counted['dead-lettered'] === 1 && counted.executed === 5;
    });
    expect(await stats(consumer)).toEqual({ executed: 5, released: 2, 'dead-lettered': 1 });
    expect(await amounts(caller)).toEqual([1, 2, 3, 4, 5]);
    await waitFor('every delivery settled', async () => (await stream.pending()) === 0);
    // Published again, it is acked without running: its key is recorded as failed.
    await pastDuplicateWindow();
    await stream.publish('payment.created', { caller, amount: 99, poison: true }, poison);
    await waitFor('the copy to be acked', async () => ((await stats(consumer)).replayed ?? 0) === 1);
    expect(await amounts(caller)).toEqual([1, 2, 3, 4, 5]);
  });

  it('a request-reply pattern whose handler fails: the attempts requeued end at once without an error, and only the last, dead-lettered, fails in the server', async () => {
    const consumer = await started();
    const caller = newCaller();
    await stream.publish('payment.quote', { caller, amount: 97, poison: true }, randomUUID());
    // One process writes the server's log lines in order: once the last attempt's is in, so is any before it.
    await waitFor('the last attempt to fail in the server', async () =>
      /payment\.quote: delivery 3 failed/.test(consumer.output()),
    );
    expect(consumer.output().match(/payment\.quote: delivery \d+ failed/g)).toEqual([
      'payment.quote: delivery 3 failed',
    ]);
    expect(await stats(consumer)).toEqual({ released: 2, 'dead-lettered': 1 });
    expect(await amounts(caller)).toEqual([]);
    await waitFor('every delivery settled', async () => (await stream.pending()) === 0);
  });

  it('malformed messages (no id, an id over 255 characters, a body that is not JSON) are terminated with a clear error, counted, and nothing is written', async () => {
    const consumer = await started();
    const caller = newCaller();
    await stream.publish('payment.created', { caller, amount: 1 });
    await stream.publish('payment.created', { caller, amount: 2 }, 'k'.repeat(256));
    await stream.publish('payment.created', undefined, randomUUID(), new TextEncoder().encode('{"caller": not json'));
    await waitFor('all three to be counted', async () => (await stats(consumer)).malformed === 3);
    const output = consumer.output();
    expect(output).toMatch(/a malformed nats message was dead-lettered: the message has no key/);
    expect(output).toMatch(
      /a malformed nats message was dead-lettered: the message's key is longer than 255 characters/,
    );
    expect(output).toMatch(/a malformed nats message was dead-lettered: the message body is not JSON/);
    expect(await amounts(caller)).toEqual([]);
    await waitFor('every delivery settled', async () => (await stream.pending()) === 0);
  });
});
