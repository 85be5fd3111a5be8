import { randomUUID } from 'node:crypto';
import { sql } from '../support/database.js';
import { newCaller } from '../support/http.js';
import type { TestStream } from '../support/jetstream.js';
import { amounts, gone, jetStreamConsumers, stats } from '../support/message-consumers.js';
import { type DemoProcess, startAppProcess, waitFor } from '../support/processes.js';
import { describeWith } from '../support/services.js';

const OUTBOX_APP = 'test/e2e/outbox.app.mjs';

/** The outbox's rows of the messages staged to `destination` (each test's own), in staging order. */
function outboxRows(destination: string) {
  return sql<{ message_id: string; sent_at: Date | null }>(
    `SELECT message_id, sent_at FROM idempotency_outbox WHERE destination = $1 ORDER BY id`,
    [destination],
  );
}

/**
 * The outbox on the machine's NATS JetStream, with processes: the relay publishes with the
 * message's id as `Nats-Msg-Id`, and the consumer app (JetStreamServer, @IdempotentMessage())
 * writes one payment per message.
 */
describeWith('nats')('the outbox on NATS JetStream', () => {
  const setup = jetStreamConsumers();
  let stream: TestStream;
  beforeEach(() => (stream = setup.stream()));
  const consumer = () => setup.started();
  const apps: DemoProcess[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.kill().catch(() => undefined)));
  });
  const outboxApp = async (env: Record<string, string> = {}) => {
    const app = await startAppProcess(OUTBOX_APP, {
      PATTERN: `${stream.prefix}payment.created`,
      CLAIM_MS: '1000',
      ...env,
    });
    apps.push(app);
    return app;
  };
  const order = (app: DemoProcess, body: object) =>
    fetch(`${app.url}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify({ to: 'nats', destination: `${stream.prefix}payment.created`, ...body }),
    });

  it('a committed order’s messages reach the consumer once, keyed by the ids stage() gave, and are marked sent', async () => {
    const [consuming, app] = await Promise.all([consumer(), outboxApp()]);
    const caller = newCaller();
    const response = await order(app, { caller, amount: 7, messages: 3, headers: { 'x-tenant': 'acme' } });
    expect(response.status).toBe(201);
    const { ids } = (await response.json()) as { ids: string[] };
    await waitFor('the three messages consumed', async () => (await amounts(`${caller}:out`)).length === 3);
    await waitFor('the messages marked sent', async () =>
      (await outboxRows(`${stream.prefix}payment.created`)).every((row) => row.sent_at),
    );
    expect((await outboxRows(`${stream.prefix}payment.created`)).map((row) => row.message_id)).toEqual(ids);
    expect(await amounts(`${caller}:out`)).toEqual([7000, 7001, 7002]);
    expect(await stats(consuming)).toEqual({ executed: 3 });
  });

  it('a relay SIGKILLed between the stream’s ack and its mark: the restarted relay publishes again, and the consumer’s key absorbs it (one effect)', async () => {
    const [consuming, app] = await Promise.all([consumer(), outboxApp()]);
    const caller = newCaller();
    await order(app, { caller, amount: 8, killRelay: true }).catch(() => undefined);
    await waitFor('the relay to die after the ack', async () => gone(app));
    await waitFor('the first copy consumed', async () => (await amounts(`${caller}:out`)).length === 1);
    expect((await outboxRows(`${stream.prefix}payment.created`))[0].sent_at).toBeNull();
    await outboxApp({ SURVIVES: '1' });
    await waitFor(
      'the message marked sent',
      async () => (await outboxRows(`${stream.prefix}payment.created`))[0].sent_at !== null,
      30_000,
    );
    await waitFor('the second copy absorbed', async () => (await stats(consuming)).replayed === 1);
    expect(await stats(consuming)).toEqual({ executed: 1, replayed: 1 });
    expect(await amounts(`${caller}:out`)).toEqual([8000]);
  });

  it('a subject no stream takes: the message stays unsent, its last_error naming the subject', async () => {
    const app = await outboxApp();
    const subject = `nostream${randomUUID().replace(/-/g, '')}.payment`;
    const response = await order(app, { caller: newCaller(), amount: 9, destination: subject });
    expect(response.status).toBe(201);
    await waitFor('a failed publish recorded', async () => (await errorsOf(subject)).length === 1);
    const [row] = await errorsOf(subject);
    expect(row.sent_at).toBeNull();
    expect(row.last_error).toContain(`no JetStream stream takes the subject "${subject}"`);
  });
});

/** The outbox's rows to `destination` whose publish failed. */
function errorsOf(destination: string) {
  return sql<{ sent_at: Date | null; last_error: string }>(
    `SELECT sent_at, last_error FROM idempotency_outbox WHERE destination = $1 AND last_error IS NOT NULL`,
    [destination],
  );
}
