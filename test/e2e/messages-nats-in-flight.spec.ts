import { randomUUID } from 'node:crypto';
import { newCaller } from '../support/http.js';
import { type TestStream, testStream } from '../support/jetstream.js';
import { amounts, CONSUMER_APP, stats } from '../support/message-consumers.js';
import { type DemoProcess, startAppProcess, waitFor } from '../support/processes.js';
import { describeWith } from '../support/services.js';

const BACKLOG = 120;
const MAX_IN_FLIGHT = 4;

/**
 * `maxInFlight` bounds each pattern's work in a process: at most that many handlers run at once,
 * and no more messages than that wait fetched and unacknowledged beside them, however long the
 * backlog (a process that took them all would hold them past `ackWaitMs`, and JetStream would
 * deliver them again elsewhere).
 */
describeWith('nats')('JetStreamServer: maxInFlight bounds what a process holds of each pattern', () => {
  let stream: TestStream;
  let consumer: DemoProcess | undefined;
  beforeEach(async () => (stream = await testStream()));
  afterEach(async () => {
    await consumer?.kill().catch(() => undefined);
    await stream.close();
  });

  it(`a backlog of ${BACKLOG} with maxInFlight ${MAX_IN_FLIGHT}: at most ${MAX_IN_FLIGHT} handlers at once, no more messages than that unacknowledged, each message run once`, async () => {
    const caller = newCaller();
    for (let amount = 1; amount <= BACKLOG; amount++)
      await stream.publish('payment.created', { caller, amount, holdMs: 20 }, randomUUID());
    consumer = await startAppProcess(CONSUMER_APP, {
      TRANSPORT: 'nats',
      STREAM: stream.name,
      DURABLE: stream.durable,
      PATTERN_PREFIX: stream.prefix,
      MAX_IN_FLIGHT: String(MAX_IN_FLIGHT),
    });
    const started = consumer;
    let mostUnacked = 0;
    await waitFor('the backlog consumed', async () => {
      mostUnacked = Math.max(mostUnacked, await stream.ackPending());
      return (await stats(started)).executed === BACKLOG;
    });
    const running = (await (await fetch(`${started.url}/stats/running`)).json()) as { most: number };
    expect(running.most).toBeGreaterThan(0);
    expect(running.most).toBeLessThanOrEqual(MAX_IN_FLIGHT);
    expect(mostUnacked).toBeLessThanOrEqual(MAX_IN_FLIGHT);
    expect(await amounts(caller)).toEqual(Array.from({ length: BACKLOG }, (_, index) => index + 1));
  });
});
