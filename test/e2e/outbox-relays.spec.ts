import { randomUUID } from 'node:crypto';
import { sql } from '../support/database.js';
import { newCaller } from '../support/http.js';
import { rmqConsumers, stats } from '../support/message-consumers.js';
import { type DemoProcess, startAppProcess, waitFor } from '../support/processes.js';
import { describeWith } from '../support/services.js';

const OUTBOX_APP = 'test/e2e/outbox.app.mjs';
const ORDERS = 200;
const PER_ORDER = 50;
const MESSAGES = ORDERS * PER_ORDER;

/** Sent and unsent messages staged to `destination` (the test's own queue). */
async function outboxCounts(destination: string): Promise<{ sent: number; unsent: number }> {
  const [row] = await sql<{ sent: number; unsent: number }>(
    `SELECT count(*) FILTER (WHERE sent_at IS NOT NULL)::int AS sent, count(*) FILTER (WHERE sent_at IS NULL)::int AS unsent
     FROM idempotency_outbox WHERE destination = $1`,
    [destination],
  );
  return row;
}

/**
 * Two relay processes over 10,000 staged messages, one of them SIGKILLed midway and started
 * again: every message reaches the @IdempotentMessage() consumer, none is lost, and the copies
 * the broker delivered twice (the killed relay's published but unmarked messages) are counted
 * and absorbed: one payment per message.
 */
describeWith('rabbitmq')('the outbox with two relays over 10,000 messages', () => {
  const consumers = rmqConsumers();
  const apps: DemoProcess[] = [];
  const startApp = async (env: Record<string, string>) => {
    const app = await startAppProcess(OUTBOX_APP, { NO_NATS: '1', ...env });
    apps.push(app);
    return app;
  };
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.kill().catch(() => undefined)));
  });

  it('every message delivered once in effect, none lost, duplicates at the broker counted and absorbed', async () => {
    const caller = newCaller();
    const destination = consumers.queue().name;
    const [consumer, stager] = await Promise.all([consumers.started(), startApp({ RELAY: '0' })]);
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < ORDERS) {
          const amount = ++next;
          const response = await fetch(`${stager.url}/orders`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
            body: JSON.stringify({ caller, amount, destination, messages: PER_ORDER }),
          });
          expect(response.status).toBe(201);
        }
      }),
    );
    expect(await outboxCounts(destination)).toEqual({ sent: 0, unsent: MESSAGES });
    const relay = { RELAY: '1', CLAIM_MS: '2000', POLL_MS: '100', SURVIVES: '1' };
    const [first] = await Promise.all([startApp(relay), startApp(relay)]);
    const relayState = async () =>
      JSON.stringify({
        counts: await outboxCounts(destination),
        claims: await sql(
          `SELECT count(*) FILTER (WHERE claimed_until > clock_timestamp())::int AS claimed, max(attempts) AS attempts,
             count(DISTINCT last_error)::int AS errors, min(last_error) AS error
           FROM idempotency_outbox WHERE sent_at IS NULL`,
        ),
        relays: apps.slice(1).map((app) => app.output().slice(-2000)),
      });
    await waitFor(
      'a fifth of the messages sent',
      async () => (await outboxCounts(destination)).sent >= MESSAGES / 5,
      60_000,
      relayState,
    );
    await first.kill();
    await startApp(relay);
    await waitFor('every message sent', async () => (await outboxCounts(destination)).unsent === 0, 120_000);
    const effects = async () =>
      (
        await sql<{ rows: number; distinct: number }>(
          'SELECT count(*)::int AS rows, count(DISTINCT amount)::int AS distinct FROM payments WHERE caller = $1',
          [`${caller}:out`],
        )
      )[0];
    await waitFor(
      'every message consumed',
      async () => (await effects()).rows >= MESSAGES,
      120_000,
      async () => JSON.stringify({ effects: await effects(), stats: await stats(consumer) }),
    );
    const queue = consumers.queue();
    await waitFor('the queue drained', async () => (await queue.counts()).ready === 0, 60_000);
    const counted = await stats(consumer);
    expect(await effects()).toEqual({ rows: MESSAGES, distinct: MESSAGES });
    expect(counted.executed).toBe(MESSAGES);
    // The copies the broker delivered twice: absorbed by the consumer's key, never run.
    const duplicates = counted.replayed ?? 0;
    process.stdout.write(
      `outbox, two relays, one killed: ${MESSAGES} messages, ${duplicates} delivered twice and absorbed\n`,
    );
    expect(Object.keys(counted).sort()).toEqual(duplicates > 0 ? ['executed', 'replayed'] : ['executed']);
  }, 400_000);
});
