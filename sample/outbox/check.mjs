// What docs/outbox.md promises, proved on this app as its consumers see it: a keyed POST /orders
// and its retry put one message in the warehouse's queue (RabbitMQ) and one in billing's stream
// (JetStream), each with the id stage() returned; an order that stages and then throws sends
// nothing; the outbox's rows are marked sent; and the app outlives a dropped RabbitMQ connection,
// its next message sent on a new one. `npm run build` and `npm run migrate`, then `npm run check`
// with DATABASE_URL, RABBITMQ_URL and NATS_URL set. The queue and the stream are this run's own.
import amqplib from 'amqplib';
import { connect as natsConnect } from 'nats';
import { connect as tcpConnect, createServer } from 'node:net';
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { check, database, newKey, proved, send } from '../check-kit.mjs';

const folder = import.meta.dirname;
const db = database(folder);
const RABBITMQ_URL = process.env.RABBITMQ_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const run = `sample_outbox_${process.pid}_${Date.now()}`;
const ORDERS_QUEUE = `${run}.orders`;
const ORDERS_SUBJECT = `${run}.orders.placed`;

/** Waits until `condition()` gives something, polling, for at most `ms`; returns it. */
async function until(what, condition, ms = 10_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await condition();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The outbox's rows of this run's messages. */
const outboxRows = async () =>
  (
    await db.query(
      'SELECT message_id, publisher, sent_at, last_error FROM idempotency_outbox WHERE destination = ANY($1) ORDER BY id',
      [[ORDERS_QUEUE, ORDERS_SUBJECT]],
    )
  ).rows;

// The consumers' side: the warehouse's queue and billing's stream, declared as their consumers do.
const amqp = await amqplib.connect(RABBITMQ_URL);
const channel = await amqp.createChannel();
await channel.assertQueue(ORDERS_QUEUE, { durable: true });
const nats = await natsConnect({ servers: NATS_URL });
const jsm = await nats.jetstreamManager();
await jsm.streams.add({ name: run, subjects: [ORDERS_SUBJECT] });

/** The messages in the warehouse's queue, taken off it. */
async function takeQueued() {
  const taken = [];
  for (let message = await channel.get(ORDERS_QUEUE, { noAck: true }); message;)
    (taken.push(message), (message = await channel.get(ORDERS_QUEUE, { noAck: true })));
  return taken.map((message) => ({ id: message.properties.messageId, body: JSON.parse(message.content.toString()) }));
}
/** The messages in billing's stream, in order. */
async function streamed() {
  const { state } = await jsm.streams.info(run);
  const messages = [];
  for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq++) {
    const message = await jsm.streams.getMessage(run, { seq });
    messages.push({ id: message.header.get('Nats-Msg-Id'), body: message.json() });
  }
  return messages;
}

// The app reaches RabbitMQ through this proxy, which can drop its connections as a broker restart does.
const broker = new URL(RABBITMQ_URL);
const sockets = new Set();
const proxy = createServer((client) => {
  const upstream = tcpConnect(Number(broker.port || 5672), broker.hostname);
  for (const [from, to] of [
    [client, upstream],
    [upstream, client],
  ]) {
    sockets.add(from);
    from.pipe(to);
    from.on('error', () => to.destroy());
    from.on('close', () => (sockets.delete(from), to.destroy()));
  }
});
proxy.listen(0, '127.0.0.1');
await once(proxy, 'listening');
const proxied = new URL(RABBITMQ_URL);
proxied.hostname = '127.0.0.1';
proxied.port = String(proxy.address().port);

// This run's queue and stream go when the check ends, however it ends (`check` exits on a failure).
process.on('exit', () => {
  const script = `
    import amqplib from 'amqplib';
    import { connect } from 'nats';
    const amqp = await amqplib.connect(${JSON.stringify(RABBITMQ_URL)});
    await (await amqp.createChannel()).deleteQueue(${JSON.stringify(ORDERS_QUEUE)});
    await amqp.close();
    const nats = await connect({ servers: ${JSON.stringify(NATS_URL)} });
    await (await nats.jetstreamManager()).streams.delete(${JSON.stringify(run)}).catch(() => undefined);
    await nats.close();`;
  spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: folder, stdio: 'ignore', timeout: 10_000 });
});

await check(
  folder,
  async (app) => {
    const token = `alice-${Date.now()}`;
    const key = newKey();
    const order = { sku: 'widget', quantity: 2 };
    const first = await send(`${app.url}/orders`, { key, token, body: order });
    proved(first.status === 201, 'a keyed POST /orders is 201', first.status);
    const retry = await send(`${app.url}/orders`, { key, token, body: order });
    proved(retry.status === 201 && retry.text === first.text, 'its retry gets the same answer', retry.text);
    const { shipment, invoice } = first.json.messages;

    const refused = await send(`${app.url}/orders`, { key: newKey(), token, body: { sku: 'gadget', quantity: 50 } });
    proved(refused.status === 409, 'an order that stages its messages and then throws is 409', refused.status);

    const sent = await until('the outbox rows marked sent', async () => {
      const rows = await outboxRows();
      return rows.length > 0 && rows.every((row) => row.sent_at) && rows;
    });
    proved(
      JSON.stringify(sent.map((row) => row.message_id)) === JSON.stringify([shipment, invoice]),
      "the outbox holds the order's two messages, with the ids stage() returned, marked sent; none of the 409's",
      sent,
    );
    const queued = await takeQueued();
    proved(
      queued.length === 1 &&
        queued[0].id === shipment &&
        queued[0].body.pattern === 'order.placed' &&
        queued[0].body.data.id === first.json.id,
      "RabbitMQ: one message in the warehouse's queue for the POST and its retry, its message-id the id stage() returned",
      queued,
    );
    const stream = await streamed();
    proved(
      stream.length === 1 && stream[0].id === invoice && stream[0].body.id === first.json.id,
      "JetStream: one message on billing's subject, its Nats-Msg-Id the id stage() returned",
      stream,
    );

    // RabbitMQ drops the app's connection: the app goes on, and its next message leaves on a new one.
    for (const socket of sockets) socket.destroy();
    await until('the app to see its connection dropped', async () => /RabbitMQ connection lost/.test(app.output));
    const after = await send(`${app.url}/orders`, { key: newKey(), token, body: order });
    proved(after.status === 201, 'after a dropped RabbitMQ connection the app still answers', after.status);
    const resent = await until('the next message in the queue', async () => {
      const taken = await takeQueued();
      return taken.length > 0 && taken;
    });
    proved(
      resent.length === 1 && resent[0].id === after.json.messages.shipment,
      'and its message reaches the queue on a new connection',
      resent,
    );
    await until('every row marked sent', async () => (await outboxRows()).every((row) => row.sent_at));
    proved((await outboxRows()).length === 4, 'every message of the run was sent once: four rows, all sent');
  },
  { env: { RABBITMQ_URL: proxied.href, ORDERS_QUEUE, ORDERS_SUBJECT } },
);
proxy.close();
await amqp.close();
await nats.drain();
await db.end();
