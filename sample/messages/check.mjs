// What docs/messages.md promises, proved on this app as a broker's client sees it: a message
// delivered twice writes one ledger entry and both copies are acked (Nest's RMQ transport, the
// consumer written by hand, JetStreamServer); a handler that fails is delivered again and, after
// its attempts, dead-lettered (RabbitMQ: to the dead-letter queue; JetStream: terminated); the
// ack follows the commit (a consumer killed before its commit leaves nothing, and the message
// comes back). `npm run build` and `npm run migrate`, then `npm run check` with DATABASE_URL,
// RABBITMQ_URL and NATS_URL set. Queues, stream and subjects are this run's own.
import amqplib from 'amqplib';
import { connect, nanos } from 'nats';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { check, database, proved } from '../check-kit.mjs';

const folder = import.meta.dirname;
const db = database(folder);
const RABBITMQ_URL = process.env.RABBITMQ_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const run = `sample_messages_${process.pid}_${Date.now()}`;
const env = {
  PAYMENTS_QUEUE: `${run}.payments`,
  REFUNDS_QUEUE: `${run}.refunds`,
  PAYMENTS_STREAM: run,
  SUBJECT_PREFIX: `${run}.`,
};
const PAYMENT_CREATED = `${env.SUBJECT_PREFIX}payment.created`;

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

/** The ledger's amounts for a payment, in order. */
const entries = async (paymentId) =>
  (await db.query('SELECT amount FROM ledger_entries WHERE payment_id = $1 ORDER BY amount', [paymentId])).rows.map(
    (row) => row.amount,
  );

/** The app's idempotency_messages_total for a handler and outcome, read from GET /metrics. */
async function counted({ url }, handler, transport, outcome) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) =>
      l.startsWith(`idempotency_messages_total{handler="${handler}",transport="${transport}",outcome="${outcome}"}`),
    );
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

/** The process id Nest's logger prints on each line (`[Nest] 1234  - ...`). */
const pidOf = (app) => Number(/\[Nest\] (\d+)/.exec(app.output)?.[1]);

const amqp = await amqplib.connect(RABBITMQ_URL);
const channel = await amqp.createChannel();
/** Publishes JSON (Nest's envelope `{ pattern, data }` for the RMQ transport), persistent, with its message id. */
const publish = (queue, body, messageId) =>
  channel.sendToQueue(queue, Buffer.from(JSON.stringify(body)), { persistent: true, messageId });
/** Messages ready in a queue: delivered ones that were not acked come back to it when their consumer goes away. */
const ready = async (queue) => (await channel.checkQueue(queue)).messageCount;

const nats = await connect({ servers: NATS_URL });
const jsm = await nats.jetstreamManager();
const js = nats.jetstream();
const json = (value) => new TextEncoder().encode(JSON.stringify(value));

// This run's queues and stream go when the check ends, however it ends (`check` exits on a failure).
process.on('exit', () => {
  const queues = [env.PAYMENTS_QUEUE, env.REFUNDS_QUEUE].flatMap((queue) => [queue, `${queue}.dead`]);
  const script = `
    import amqplib from 'amqplib';
    import { connect } from 'nats';
    const amqp = await amqplib.connect(${JSON.stringify(RABBITMQ_URL)});
    const channel = await amqp.createChannel();
    for (const queue of ${JSON.stringify(queues)}) await channel.deleteQueue(queue);
    await amqp.close();
    const nats = await connect({ servers: ${JSON.stringify(NATS_URL)} });
    await (await nats.jetstreamManager()).streams.delete(${JSON.stringify(run)}).catch(() => undefined);
    await nats.close();`;
  spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: folder, stdio: 'ignore', timeout: 10_000 });
});

await check(
  folder,
  async (app) => {
    const payment = randomUUID();
    const messageId = randomUUID();
    const created = { pattern: PAYMENT_CREATED, data: { id: payment, amount: 1250 } };
    publish(env.PAYMENTS_QUEUE, created, messageId);
    publish(env.PAYMENTS_QUEUE, created, messageId);
    const refund = { paymentId: payment, amount: 250 };
    const refundId = randomUUID();
    publish(env.REFUNDS_QUEUE, refund, refundId);
    publish(env.REFUNDS_QUEUE, refund, refundId);
    // An entry of 0 is refused by the table: its handler fails each time it runs.
    const refused = randomUUID();
    publish(env.PAYMENTS_QUEUE, { pattern: PAYMENT_CREATED, data: { id: refused, amount: 0 } }, randomUUID());

    for (const handler of ['PaymentEvents.created', 'RefundsConsumer.issued'])
      await until(`${handler}'s duplicate acked`, async () => (await counted(app, handler, 'rmq', 'replayed')) === 1);
    proved(
      JSON.stringify(await entries(payment)) === JSON.stringify([-250, 1250]),
      'RabbitMQ: a payment (RMQ transport) and a refund (amqplib by hand), each delivered twice with one message id, write one entry each',
      await entries(payment),
    );
    await until('the refused payment dead-lettered', async () => (await ready(`${env.PAYMENTS_QUEUE}.dead`)) === 1);
    proved(
      (await counted(app, 'PaymentEvents.created', 'rmq', 'released')) === 2 &&
        (await counted(app, 'PaymentEvents.created', 'rmq', 'dead_lettered')) === 1,
      'a failing handler is delivered again, and dead-lettered to payments.dead after its 3 attempts',
    );
    proved((await entries(refused)).length === 0, 'its writes are undone: no ledger entry');
    await app.stop();
    proved(
      (await ready(env.PAYMENTS_QUEUE)) === 0 && (await ready(env.REFUNDS_QUEUE)) === 0,
      'every copy was acked: none came back to the queues when the app stopped',
    );
  },
  { env },
);

// The ack follows the commit: a consumer killed while its handler's transaction is open leaves
// no entry, and the broker delivers the message again to the next process.
const late = randomUUID();
const locker = await db.connect();
await check(
  folder,
  async (app) => {
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE ledger_entries IN SHARE MODE'); // holds every insert back
    publish(env.PAYMENTS_QUEUE, { pattern: PAYMENT_CREATED, data: { id: late, amount: 700 } }, randomUUID());
    await until(
      'the handler to wait at its insert, in its key transaction',
      async () =>
        (await db.query("SELECT 1 FROM pg_locks WHERE relation = 'ledger_entries'::regclass AND NOT granted"))
          .rowCount > 0,
    );
    process.kill(pidOf(app), 'SIGKILL');
    await locker.query('ROLLBACK');
    await app.stop();
    proved((await entries(late)).length === 0, 'a consumer killed before its commit leaves no entry');
  },
  { env },
);
locker.release();
await check(
  folder,
  async (app) => {
    await until('the message delivered again and written', async () => (await entries(late)).length === 1);
    await app.stop();
    proved(
      (await entries(late)).length === 1 && (await ready(env.PAYMENTS_QUEUE)) === 0,
      'it was not acked before: the broker delivered it to the next process, which wrote it once and acked it',
    );
  },
  { env },
);

// The same handlers on JetStream. The stream's duplicate window is short, so that a publisher's
// retry past it is a second message (inside it, JetStream drops the copy itself).
await jsm.streams.add({ name: run, subjects: [`${env.SUBJECT_PREFIX}>`], duplicate_window: nanos(200) });
const terminated = nats.subscribe(`$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.${run}.>`, { max: 1 });
await check(
  folder,
  async (app) => {
    const payment = randomUUID();
    const messageId = randomUUID();
    const body = json({ id: payment, amount: 990 });
    await js.publish(PAYMENT_CREATED, body, { msgID: messageId });
    await until('the payment in the ledger', async () => (await entries(payment)).length > 0);
    await until(
      'the stream to take the same id again',
      async () => !(await js.publish(PAYMENT_CREATED, body, { msgID: messageId })).duplicate,
    );
    await until('the copy acked', async () => (await counted(app, 'PaymentEvents.created', 'nats', 'replayed')) === 1);
    proved(
      JSON.stringify(await entries(payment)) === JSON.stringify([990]),
      'JetStream: a message the stream holds twice with one Nats-Msg-Id writes one entry',
      await entries(payment),
    );

    const refused = randomUUID();
    await js.publish(PAYMENT_CREATED, json({ id: refused, amount: 0 }), { msgID: randomUUID() });
    const advisory = await Promise.race([
      (async () => {
        for await (const message of terminated) return message.json();
      })(),
      new Promise((_, reject) => setTimeout(() => reject(new Error('no MSG_TERMINATED advisory within 10 s')), 10_000)),
    ]);
    proved(
      advisory.deliveries === 3 && (await counted(app, 'PaymentEvents.created', 'nats', 'released')) === 2,
      'a failing handler is delivered again, and terminated (JetStream advisory) after its 3 attempts',
      advisory,
    );
    proved((await entries(refused)).length === 0, 'its writes are undone: no ledger entry');
    await app.stop();
    let unsettled = 0;
    for await (const consumer of jsm.consumers.list(run)) unsettled += consumer.num_pending + consumer.num_ack_pending;
    proved(unsettled === 0, 'every delivery was acked or terminated: nothing pending on the stream');
  },
  { env: { ...env, TRANSPORT: 'jetstream' } },
);

await amqp.close();
await nats.drain();
await db.end();
