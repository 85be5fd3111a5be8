// The consumer pair of `npm run bench`: the same handler on Nest's RMQ transport, plain (its own
// transaction, acked after its commit), under @IdempotentMessage(), and plain with the key's
// statements in its transaction and no module code (the design's ceiling; bench/servers/consumer.mjs),
// each on a queue of its own on the machine's RabbitMQ, in interleaved rounds:
// - backlog: `backlog` messages published at once, drained; messages per second from the first
//   row written to the last;
// - paced: `rate` messages per second for `seconds`; p50 and p99 from publish to commit (the row's
//   clock_timestamp() against the time the publisher stamped in the message).
import amqplib from 'amqplib';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { start } from './processes.mjs';

const RABBITMQ = process.env.RABBITMQ_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

export async function measureConsumers(
  database,
  { rounds, execPath, previousDist, backlog = 3_000, rate = 300, seconds = 5, log },
) {
  await database.sql(
    'CREATE TABLE IF NOT EXISTS bench_messages (batch text NOT NULL, published_at timestamptz NOT NULL, committed_at timestamptz NOT NULL DEFAULT clock_timestamp())',
  );
  const connection = await amqplib.connect(RABBITMQ);
  const channel = await connection.createChannel();
  // `previous`: the module consumer from BENCH_PREVIOUS_DIST's build.
  const modes = previousDist ? ['plain', 'module', 'ceiling', 'previous'] : ['plain', 'module', 'ceiling'];
  const queues = Object.fromEntries(modes.map((mode) => [mode, `bench.${mode}.${randomUUID()}`]));
  const consumers = {};
  try {
    for (const mode of modes) {
      await channel.assertQueue(queues[mode], { durable: true });
      consumers[mode] = await start('servers/consumer.mjs', {
        name: `${mode} consumer`,
        env: {
          DATABASE_URL: database.url,
          CONSUMER: mode === 'previous' ? 'module' : mode,
          QUEUE: queues[mode],
          ...(mode === 'previous' && { MODULE_DIST: previousDist }),
        },
        execPath,
      });
    }
    const publish = (mode, batch) =>
      channel.sendToQueue(
        queues[mode],
        Buffer.from(JSON.stringify({ pattern: 'bench.message', data: { batch, publishedAt: Date.now() } })),
        { messageId: randomUUID(), persistent: true },
      );
    const written = async (batch) =>
      (await database.sql('SELECT count(*)::int AS n FROM bench_messages WHERE batch = $1', [batch]))[0].n;
    const waitWritten = async (batch, count) => {
      for (const deadline = Date.now() + 300_000; (await written(batch)) < count;) {
        if (Date.now() > deadline)
          throw new Error(`the ${batch} consumer did not write ${count} rows within 5 minutes`);
        await sleep(50);
      }
    };
    const results = Object.fromEntries(modes.map((mode) => [mode, []]));
    for (let round = 1; round <= rounds; round++) {
      // Every other round in the reverse order: no consumer always runs on the fuller table.
      for (const mode of round % 2 === 0 ? [...modes].reverse() : modes) {
        // Warm-up (not measured), then the backlog, then the paced run.
        const warm = `warm-${mode}-${round}-${randomUUID()}`;
        for (let i = 0; i < 500; i++) publish(mode, warm);
        await waitWritten(warm, 500);
        log(`round ${round}: ${mode} consumer, a backlog of ${backlog}`);
        const drained = `backlog-${mode}-${round}-${randomUUID()}`;
        for (let i = 0; i < backlog; i++) publish(mode, drained);
        await waitWritten(drained, backlog);
        const [span] = await database.sql(
          'SELECT extract(epoch FROM max(committed_at) - min(committed_at)) * 1000 AS ms FROM bench_messages WHERE batch = $1',
          [drained],
        );
        log(`round ${round}: ${mode} consumer, ${rate} messages/s for ${seconds} s`);
        const paced = `paced-${mode}-${round}-${randomUUID()}`;
        const total = rate * seconds;
        const startedAt = Date.now();
        for (let i = 0; i < total; i++) {
          publish(mode, paced);
          const ahead = startedAt + ((i + 1) * 1000) / rate - Date.now();
          if (ahead > 0) await sleep(ahead);
        }
        await waitWritten(paced, total);
        const [latency] = await database.sql(
          `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50, percentile_cont(0.99) WITHIN GROUP (ORDER BY ms) AS p99
           FROM (SELECT extract(epoch FROM committed_at - published_at) * 1000 AS ms FROM bench_messages WHERE batch = $1) AS m`,
          [paced],
        );
        results[mode].push({
          messagesPerSecond: (backlog - 1) / (Number(span.ms) / 1000),
          p50: Number(latency.p50),
          p99: Number(latency.p99),
          backlog,
          rate,
          seconds,
        });
      }
    }
    return results;
  } finally {
    await Promise.all(Object.values(consumers).map((consumer) => consumer.kill()));
    for (const queue of Object.values(queues)) await channel.deleteQueue(queue).catch(() => undefined);
    await connection.close().catch(() => undefined);
  }
}
