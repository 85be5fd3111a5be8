import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from '../support/database.js';
import { newCaller } from '../support/http.js';
import { DUPLICATE_WINDOW_MS, testStream } from '../support/jetstream.js';
import { CONSUMER_APP, stats } from '../support/message-consumers.js';
import { type DemoProcess, startAppProcess, waitFor } from '../support/processes.js';
import { testQueue } from '../support/rabbitmq.js';
import { BROKER_OF, itWith } from '../support/services.js';

const KEYS = 7_000;
/** Publishes awaiting the stream's acknowledgement at once. */
const IN_FLIGHT = 100;
const DUPLICATES = 3_000;

const total = async (consumers: DemoProcess[], type: string) =>
  (await Promise.all(consumers.map(stats))).reduce((sum, counted) => sum + (counted[type] ?? 0), 0);

/**
 * The deliveries, in rounds: every key once, and `DUPLICATES` of them again, shuffled; no key
 * twice in one round (JetStream drops a repeated id within its duplicate window itself, which
 * would prove nothing of the consumers).
 */
function rounds(): number[][] {
  const keys = Array.from({ length: KEYS }, (_, i) => i + 1);
  const again = [...keys].sort(() => Math.random() - 0.5).slice(0, DUPLICATES);
  const deliveries = [...keys, ...again].sort(() => Math.random() - 0.5);
  const result: number[][] = [];
  for (const key of deliveries) {
    let round = result.find((candidate) => !candidate.includes(key) && candidate.length < 2_000);
    if (!round) result.push((round = []));
    round.push(key);
  }
  return result;
}

/** Two consumer processes competing on one queue or stream, with 30 % duplicates: one effect per key, 0 lost, 0 doubled. */
describe.each(['rmq', 'nats'] as const)(
  'two consumers competing on %s, 10,000 messages with 30 %% duplicates',
  (transport) => {
    itWith(BROKER_OF[transport])(
      'each key has exactly one effect: none lost, none doubled, every message settled',
      async () => {
        const caller = newCaller();
        const ids = new Map<number, string>();
        const idOf = (key: number) => ids.get(key) ?? ids.set(key, randomUUID()).get(key)!;
        const queue = transport === 'rmq' ? await testQueue() : undefined;
        const stream = transport === 'nats' ? await testStream() : undefined;
        const env: Record<string, string> = queue
          ? { TRANSPORT: 'rmq', QUEUE: queue.name }
          : { TRANSPORT: 'nats', STREAM: stream!.name, DURABLE: stream!.durable, PATTERN_PREFIX: stream!.prefix };
        const consumers = await Promise.all(
          [0, 1].map(() => startAppProcess(CONSUMER_APP, { ...env, MAX_ATTEMPTS: '3' })),
        );
        try {
          for (const round of rounds()) {
            if (queue) for (const key of round) queue.publish('payment.created', { caller, amount: key }, idOf(key));
            else {
              for (let from = 0; from < round.length; from += IN_FLIGHT) {
                await Promise.all(
                  round
                    .slice(from, from + IN_FLIGHT)
                    .map((key) => stream!.publish('payment.created', { caller, amount: key }, idOf(key))),
                );
              }
              // The next round may repeat a key of this one: past the window, JetStream takes it.
              await sleep(DUPLICATE_WINDOW_MS + 100);
            }
          }
          await waitFor(
            'every delivery answered',
            async () =>
              (await total(consumers, 'executed')) === KEYS && (await total(consumers, 'replayed')) === DUPLICATES,
            180_000,
          );
          const [{ count, distinct }] = await sql<{ count: number; distinct: number }>(
            'SELECT count(*)::int AS count, count(DISTINCT amount)::int AS distinct FROM payments WHERE caller = $1',
            [caller],
          );
          expect({ count, distinct }).toEqual({ count: KEYS, distinct: KEYS });
          // Both consumers took part.
          for (const consumer of consumers) expect(((await stats(consumer)).executed ?? 0) > 0).toBe(true);
          expect(await total(consumers, 'malformed')).toBe(0);
          expect(await total(consumers, 'dead-lettered')).toBe(0);
          if (queue) {
            await Promise.all(consumers.map((consumer) => consumer.stop()));
            expect(await queue.counts()).toEqual({ ready: 0, dead: 0 });
          } else {
            await waitFor('every delivery acked', async () => (await stream!.pending()) === 0);
          }
        } finally {
          await Promise.all(consumers.map((consumer) => consumer.kill().catch(() => undefined)));
          await queue?.close();
          await stream?.close();
        }
      },
      300_000,
    );
  },
);
