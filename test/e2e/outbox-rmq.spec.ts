import amqplib from 'amqplib';
import { randomUUID } from 'node:crypto';
import { sql } from '../support/database.js';
import { newCaller } from '../support/http.js';
import { amounts, gone, rmqConsumers, stats } from '../support/message-consumers.js';
import { type DemoProcess, startAppProcess, waitFor } from '../support/processes.js';
import { RABBITMQ_URL, testQueue } from '../support/rabbitmq.js';
import { describeWith } from '../support/services.js';

/** The app that stages messages in the key's transaction (test/e2e/outbox.app.mjs). */
const OUTBOX_APP = 'test/e2e/outbox.app.mjs';

interface Order {
  caller: string;
  amount: number;
  destination: string;
  messages?: number;
  fail?: boolean;
  kill?: 'after-commit';
  killRelay?: boolean;
  orderingKey?: string;
  headers?: Record<string, string>;
}

/** POST /orders with a fresh key (or `key`); the status and body, or the error when the process died answering. */
async function order(app: DemoProcess, body: Order, key = randomUUID()): Promise<{ status: number; body: any }> {
  const response = await fetch(`${app.url}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

/** The outbox's rows of the messages staged to `destination` (each test's own), in staging order. */
function outboxRows(destination: string) {
  return sql<{ message_id: string; sent_at: Date | null; attempts: number }>(
    `SELECT message_id, sent_at, attempts FROM idempotency_outbox WHERE destination = $1 ORDER BY id`,
    [destination],
  );
}

/**
 * The outbox on the machine's RabbitMQ, with processes: the app stages in its key's transaction,
 * its relay publishes after the commit, and an @IdempotentMessage() consumer (the consumer app)
 * writes one payment per message.
 */
describeWith('rabbitmq')('the outbox on RabbitMQ: staged in the key’s transaction, relayed after the commit', () => {
  const consumers = rmqConsumers();
  const apps: DemoProcess[] = [];
  const startApp = async (env: Record<string, string> = {}) => {
    const app = await startAppProcess(OUTBOX_APP, { NO_NATS: '1', ...env });
    apps.push(app);
    return app;
  };
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.kill().catch(() => undefined)));
  });

  it('a committed order’s messages reach the consumer once, with the ids stage() gave, and are marked sent; a replayed order stages nothing again', async () => {
    const [consumer, app] = await Promise.all([consumers.started(), startApp()]);
    const caller = newCaller();
    const key = randomUUID();
    const first = await order(app, { caller, amount: 1, destination: consumers.queue().name, messages: 2 }, key);
    expect(first.status).toBe(201);
    expect(first.body.ids).toHaveLength(2);
    await waitFor('both messages consumed', async () => (await amounts(`${caller}:out`)).length === 2);
    const replayed = await order(app, { caller, amount: 1, destination: consumers.queue().name, messages: 2 }, key);
    expect(replayed).toEqual(first);
    await waitFor('the messages marked sent', async () =>
      (await outboxRows(consumers.queue().name)).every((row) => row.sent_at),
    );
    const rows = await outboxRows(consumers.queue().name);
    expect(rows.map((row) => row.message_id)).toEqual(first.body.ids);
    expect(await amounts(`${caller}:out`)).toEqual([1000, 1001]);
    expect(await amounts(caller)).toEqual([1]);
    expect(await stats(consumer)).toEqual({ executed: 2 });
  });

  it('a handler that stages and then throws leaves no message: nothing in the outbox, nothing consumed, and its retry stages and sends once', async () => {
    const [consumer, app] = await Promise.all([consumers.started(), startApp()]);
    const caller = newCaller();
    const key = randomUUID();
    const destination = consumers.queue().name;
    expect((await order(app, { caller, amount: 2, destination, fail: true }, key)).status).toBe(500);
    expect(await outboxRows(consumers.queue().name)).toEqual([]);
    expect(await amounts(caller)).toEqual([]);
    expect((await order(app, { caller, amount: 2, destination }, key)).status).toBe(201);
    await waitFor('the retry’s message consumed', async () => (await amounts(`${caller}:out`)).length === 1);
    expect(await amounts(caller)).toEqual([2]);
    expect(await outboxRows(consumers.queue().name)).toHaveLength(1);
    expect(await stats(consumer)).toEqual({ executed: 1 });
  });

  it('IdempotencyService.run() stages as a route does: a failed run leaves nothing, a committed one sends once', async () => {
    const [consumer, app] = await Promise.all([consumers.started(), startApp()]);
    const caller = newCaller();
    const call = (body: object) =>
      fetch(`${app.url}/calls/${caller}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((response) => response.json());
    const destination = consumers.queue().name;
    expect(await call({ caller, amount: 3, destination, fail: true })).toMatchObject({ kind: 'failed' });
    expect(await outboxRows(consumers.queue().name)).toEqual([]);
    expect(await call({ caller, amount: 3, destination })).toMatchObject({ kind: 'executed' });
    expect(await call({ caller, amount: 3, destination })).toMatchObject({ kind: 'replayed' });
    await waitFor('the message consumed', async () => (await amounts(`${caller}:out`)).length === 1);
    expect(await outboxRows(consumers.queue().name)).toHaveLength(1);
    expect(await stats(consumer)).toEqual({ executed: 1 });
  });

  it('an @IdempotentMessage() handler stages as a route does: a delivery that fails leaves nothing, and a message delivered twice stages once', async () => {
    const inbound = await testQueue('idempotency-outbox-in');
    try {
      const [consumer] = await Promise.all([consumers.started(), startApp({ IN_QUEUE: inbound.name })]);
      const caller = newCaller();
      const destination = consumers.queue().name;
      inbound.publish('order.forward', { caller, amount: 13, destination, fail: true }, randomUUID());
      await waitFor('the failed delivery dead-lettered', async () => (await inbound.counts()).dead === 1);
      expect(await outboxRows(destination)).toEqual([]);
      const id = randomUUID();
      for (let i = 0; i < 2; i++)
        inbound.publish('order.forward', { caller, amount: 14, destination, messages: 2 }, id);
      await waitFor('both staged messages consumed', async () => (await amounts(`${caller}:out`)).length === 2);
      await waitFor('the inbound queue drained', async () => (await inbound.counts()).ready === 0);
      expect(await amounts(caller)).toEqual([14]);
      expect(await outboxRows(destination)).toHaveLength(2);
      expect(await amounts(`${caller}:out`)).toEqual([14000, 14001]);
      expect(await stats(consumer)).toEqual({ executed: 2 });
    } finally {
      await inbound.close();
    }
  });

  it('one key’s messages leave in the order staged, persistent, with their ids as message-id and their headers', async () => {
    const queue = await testQueue('idempotency-outbox-order');
    const app = await startApp();
    const connection = await amqplib.connect(RABBITMQ_URL);
    try {
      const caller = newCaller();
      const headers = { 'x-tenant': 'acme' };
      const { status, body } = await order(app, { caller, amount: 4, destination: queue.name, messages: 20, headers });
      expect(status).toBe(201);
      const channel = await connection.createChannel();
      const received: { amount: number; messageId: string; headers: unknown; persistent: unknown }[] = [];
      await waitFor('the 20 messages in the queue', async () => {
        const message = await channel.get(queue.name, { noAck: true });
        if (message) {
          const { messageId, headers: carried, deliveryMode } = message.properties;
          received.push({
            amount: JSON.parse(message.content.toString()).data.amount,
            messageId,
            headers: carried,
            persistent: deliveryMode,
          });
        }
        return received.length === 20;
      });
      expect(received).toEqual(
        Array.from({ length: 20 }, (_, n) => ({ amount: 4000 + n, messageId: body.ids[n], headers, persistent: 2 })),
      );
    } finally {
      await connection.close();
      await queue.close();
    }
  });

  it('with storage.encryption, a staged message is sealed in the outbox (no payload nor header in clear) and published in clear', async () => {
    const queue = await testQueue('idempotency-outbox-sealed');
    const app = await startApp({ SEALED: '1' });
    const connection = await amqplib.connect(RABBITMQ_URL);
    try {
      const caller = newCaller();
      const headers = { 'x-tenant': 'acme-sealed' };
      const { status, body } = await order(app, { caller, amount: 9, destination: queue.name, headers });
      expect(status).toBe(201);
      const channel = await connection.createChannel();
      const message = await waitFor(
        'the message in the queue',
        async () => (await channel.get(queue.name)) || undefined,
      );
      expect(message.properties).toMatchObject({ messageId: body.ids[0], headers });
      expect(JSON.parse(message.content.toString())).toMatchObject({ data: { caller: `${caller}:out`, amount: 9000 } });
      const [row] = await sql<{ headers: unknown; payload: Buffer }>(
        'SELECT headers, payload FROM idempotency_outbox WHERE destination = $1',
        [queue.name],
      );
      expect(row.headers).toEqual({ sealedWith: 'outbox-test' });
      expect(row.payload.includes(caller)).toBe(false);
      expect(row.payload.includes('acme-sealed')).toBe(false);
    } finally {
      await connection.close();
      await queue.close();
    }
  });

  it('an app SIGKILLed right after its commit, before it answered: the message is in the outbox, unsent, and the restarted relay sends it once', async () => {
    const [consumer, app] = await Promise.all([consumers.started(), startApp({ CLAIM_MS: '1000' })]);
    const caller = newCaller();
    const destination = consumers.queue().name;
    await expect(order(app, { caller, amount: 5, destination, kill: 'after-commit' })).rejects.toThrow();
    await waitFor('the app to die', async () => gone(app));
    expect(await amounts(caller)).toEqual([5]);
    const [staged] = await outboxRows(consumers.queue().name);
    expect(staged.sent_at).toBeNull();
    await startApp({ SURVIVES: '1', CLAIM_MS: '1000' });
    await waitFor('the message consumed', async () => (await amounts(`${caller}:out`)).length === 1, 30_000);
    await waitFor(
      'the message marked sent',
      async () => (await outboxRows(consumers.queue().name))[0].sent_at !== null,
    );
    expect(await amounts(`${caller}:out`)).toEqual([5000]);
    expect((await stats(consumer)).executed).toBe(1);
  });

  it('a relay SIGKILLed between the broker’s confirm and its mark: the restarted relay publishes again, and the consumer’s key absorbs it (one effect)', async () => {
    const [consumer, app] = await Promise.all([consumers.started(), startApp({ CLAIM_MS: '1000' })]);
    const caller = newCaller();
    const destination = consumers.queue().name;
    const answer = await order(app, { caller, amount: 6, destination, killRelay: true }).catch(() => undefined);
    await waitFor('the relay to die after the confirm', async () => gone(app));
    // The answer may or may not have left before the relay killed its process.
    if (answer) expect(answer.status).toBe(201);
    await waitFor('the first copy consumed', async () => (await amounts(`${caller}:out`)).length === 1);
    expect((await outboxRows(consumers.queue().name))[0].sent_at).toBeNull();
    await startApp({ SURVIVES: '1', CLAIM_MS: '1000' });
    await waitFor(
      'the message marked sent',
      async () => (await outboxRows(consumers.queue().name))[0].sent_at !== null,
      30_000,
    );
    await waitFor('the second copy absorbed', async () => (await stats(consumer)).replayed === 1);
    expect(await stats(consumer)).toEqual({ executed: 1, replayed: 1 });
    expect(await amounts(`${caller}:out`)).toEqual([6000]);
    expect((await outboxRows(consumers.queue().name))[0].attempts).toBe(2);
  });

  describe.each([
    ['typeorm', {}],
    ['typeorm', { TYPEORM_ACCESS: 'public-api' }],
    ['cls', {}],
    ['prisma', {}],
    ['cls-prisma', {}],
  ])('on the %s host %j', (host, env) => {
    it('an order’s message is sent once after its commit; one that throws after staging leaves none', async () => {
      const [consumer, app] = await Promise.all([consumers.started(), startApp({ HOST: host, ...env })]);
      const caller = newCaller();
      const destination = consumers.queue().name;
      expect((await order(app, { caller, amount: 11, destination, fail: true })).status).toBe(500);
      expect((await order(app, { caller, amount: 12, destination })).status).toBe(201);
      await waitFor('the message consumed', async () => (await amounts(`${caller}:out`)).length === 1);
      expect(await amounts(caller)).toEqual([12]);
      expect(await amounts(`${caller}:out`)).toEqual([12000]);
      expect(await outboxRows(destination)).toHaveLength(1);
      expect(await stats(consumer)).toEqual({ executed: 1 });
    });
  });
});
