import { randomUUID } from 'node:crypto';
import { Queue, QueueEvents } from 'bullmq';
import { paymentCount, sql } from '../support/database.js';
import { type Answer, newCaller, newKey, send } from '../support/http.js';
import { type DemoProcess, startAppProcess, waitFor } from '../support/processes.js';
import { testQueue, type TestQueue } from '../support/rabbitmq.js';
import { available, itWith } from '../support/services.js';

/** The app whose every entry keeps tombstones (ttl 2 s, tombstone 1 h), with the expiry header. */
const APP = 'test/e2e/tombstones.app.mjs';

const redis = () => {
  const url = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  return { host: url.hostname, port: Number(url.port || 6379) };
};

async function events(app: DemoProcess): Promise<Record<string, number>> {
  return (await (await fetch(`${app.url}/events`)).json()) as Record<string, number>;
}

async function call(app: DemoProcess, key: string, body: object): Promise<any> {
  const response = await fetch(`${app.url}/calls/${key}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return response.json();
}

interface KeyRow {
  key: string;
  state: string;
  status: number;
  response_headers: unknown;
  response_body: Buffer | null;
  completed_at: Date | null;
  response_expires_at: Date | null;
  expires_at: Date;
}

/**
 * One process runs each entry's work once and stops; the keys pass their ttl; a second process
 * sweeps (dropping the responses, keeping the tombstones) and receives every retry: nothing runs
 * again, and each entry answers as its sender needs.
 */
describe('tombstones: a key retried past its ttl, inside its tombstone, runs nothing again, on every entry (two processes, a sweep between)', () => {
  const http = { key: newKey(), caller: newCaller() };
  const webhook = { id: `evt_${randomUUID()}`, payer: newCaller() };
  const calling = { key: randomUUID(), caller: newCaller() };
  const message = { id: randomUUID(), caller: newCaller() };
  const job = { order: randomUUID(), payer: newCaller() };
  let queue: TestQueue | undefined;
  let jobs: { name: string; queue: Queue; events: QueueEvents } | undefined;
  let second: DemoProcess | undefined;
  let first: { answer: Answer; replay: Answer; webhook: Answer; call: any };
  let swept: { ran: boolean; responsesDropped: number };
  const keys = () => [http.key, webhook.id, calling.key, ...(queue ? [message.id] : []), ...(jobs ? [job.order] : [])];
  const rows = () =>
    sql<KeyRow>(
      `SELECT key, state, status, response_headers, response_body, completed_at, response_expires_at, expires_at
       FROM idempotency_keys WHERE key = ANY($1::text[]) ORDER BY key`,
      [keys()],
    );

  beforeAll(async () => {
    if (available('rabbitmq')) queue = await testQueue('tombstones');
    if (available('redis')) {
      const name = `tombstones-${randomUUID()}`;
      jobs = {
        name,
        queue: new Queue(name, { connection: redis() }),
        events: new QueueEvents(name, { connection: redis() }),
      };
      await jobs.events.waitUntilReady();
    }
    const env = { ...(queue && { QUEUE: queue.name }), ...(jobs && { JOB_QUEUE: jobs.name }) };
    const app = await startAppProcess(APP, env);
    try {
      const answer = await send(`${app.url}/payments`, { ...http, body: { amount: 1 } });
      const replay = await send(`${app.url}/payments`, { ...http, body: { amount: 1 } });
      const delivered = await send(`${app.url}/webhooks/provider`, { caller: null, body: { ...webhook, amount: 2 } });
      first = {
        answer,
        replay,
        webhook: delivered,
        call: await call(app, calling.key, { caller: calling.caller, amount: 3 }),
      };
      if (queue) {
        queue.publish('payment.created', { caller: message.caller, amount: 4 }, message.id);
        await waitFor(
          'the message to be run',
          async () => (await events(app))['executed MessagesController.created'] === 1,
        );
      }
      if (jobs) {
        const added = await jobs.queue.add(
          'pay',
          { payer: job.payer, amount: 5, order: job.order },
          { jobId: `first-${job.order}` },
        );
        expect(await added.waitUntilFinished(jobs.events, 30_000)).toEqual({ paid: 5 });
      }
    } finally {
      // Stopped, not killed: the message's ack and the job's completion are sent before it goes.
      await app.stop();
    }
    if (queue) expect(await queue.counts()).toEqual({ ready: 0, dead: 0 });
    await waitFor('every key to pass its ttl', async () => {
      const [row] = await sql(
        `SELECT count(*)::int AS n, bool_and(response_expires_at < now()) AS past FROM idempotency_keys WHERE key = ANY($1::text[])`,
        [keys()],
      );
      return row.n === keys().length && row.past;
    });
    second = await startAppProcess(APP, env);
    swept = (await (await fetch(`${second.url}/sweep`, { method: 'POST' })).json()) as typeof swept;
  }, 120_000);

  afterAll(async () => {
    await second?.stop();
    await queue?.close();
    if (jobs) {
      await jobs.queue.obliterate({ force: true });
      await Promise.all([jobs.queue.close(), jobs.events.close()]);
    }
  });

  it('the first answers ran once each, and an HTTP answer and its replay carry the same Idempotency-Key-Expires, a tombstone away', () => {
    expect(first.answer.status).toBe(201);
    expect(first.webhook.status).toBe(200);
    expect(first.call).toEqual({ kind: 'executed', value: { paid: 3 } });
    const expires = first.answer.headers['idempotency-key-expires'] as string;
    expect(Date.parse(expires) - Date.parse(first.answer.headers.date as string)).toBeGreaterThan(3_590_000);
    expect(first.replay.headers['idempotent-replayed']).toBe('true');
    expect(first.replay.headers['idempotency-key-expires']).toBe(expires);
    expect(first.replay.body.equals(first.answer.body)).toBe(true);
  });

  it("the sweep dropped every response and kept the tombstones: the status, when the key completed, and the row until the tombstone's end", async () => {
    expect(swept.ran).toBe(true);
    expect(swept.responsesDropped).toBeGreaterThanOrEqual(keys().length);
    const kept = await rows();
    expect(kept).toHaveLength(keys().length);
    for (const row of kept) {
      expect(row).toMatchObject({ state: 'completed', response_headers: null, response_body: null });
      expect(row.completed_at!.getTime()).toBeLessThan(row.response_expires_at!.getTime());
      expect(row.expires_at.getTime() - row.completed_at!.getTime()).toBeGreaterThan(3_590_000);
    }
    const status = Object.fromEntries(kept.map((row) => [row.key, row.status]));
    expect(status).toMatchObject({ [http.key]: 201, [webhook.id]: 200, [calling.key]: 0 });
  });

  it('HTTP: 410 key-expired, which says when the key completed and with which status, and when it expires; nothing ran', async () => {
    const answer = await send(`${second!.url}/payments`, { ...http, body: { amount: 1 } });
    expect(answer.status).toBe(410);
    expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(answer.headers['idempotent-replayed']).toBeUndefined();
    const [row] = (await rows()).filter((r) => r.key === http.key);
    expect(answer.json).toEqual({
      type: 'urn:nestjs-pg-idempotency:key-expired',
      title: 'Idempotency key completed, its response no longer kept',
      status: 410,
      detail: expect.stringContaining('the request was not run again'),
      completedAt: row.completed_at!.toISOString(),
      responseExpiredAt: row.response_expires_at!.toISOString(),
      keyExpiresAt: row.expires_at.toISOString(),
      recordedStatus: 201,
    });
    // The expiry the first answer told (read before the row was written, whole seconds) and the row's.
    const told = Date.parse(answer.headers['idempotency-key-expires'] as string);
    expect(told).toBe(Math.floor(row.expires_at.getTime() / 1000) * 1000);
    expect(Math.abs(told - Date.parse(first.answer.headers['idempotency-key-expires'] as string))).toBeLessThanOrEqual(
      1000,
    );
    expect(await paymentCount(http.caller)).toBe(1);
  });

  it("a named caller's route (a webhook provider's): 200, what the tombstone keeps as JSON, so the provider stops; nothing ran", async () => {
    const answer = await send(`${second!.url}/webhooks/provider`, { caller: null, body: { ...webhook, amount: 2 } });
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ type: 'urn:nestjs-pg-idempotency:key-expired', recordedStatus: 200 });
    expect(await paymentCount(webhook.payer)).toBe(1);
  });

  it("IdempotencyService.run(): kind 'tombstone', with the tombstone; the work did not run", async () => {
    const outcome = await call(second!, calling.key, { caller: calling.caller, amount: 3 });
    expect(outcome).toEqual({
      kind: 'tombstone',
      tombstone: {
        completedAt: expect.any(String),
        responseExpiredAt: expect.any(String),
        expiresAt: expect.any(String),
        status: 0,
      },
    });
    expect(await paymentCount(calling.caller)).toBe(1);
    expect(await events(second!)).toMatchObject({ 'tombstone payment.call': 1 });
  });

  itWith('rabbitmq')('a message delivered again: acked, not run, not dead-lettered', async () => {
    queue!.publish('payment.created', { caller: message.caller, amount: 4 }, message.id);
    await waitFor(
      'the delivery to meet the tombstone',
      async () => (await events(second!))['tombstone MessagesController.created'] === 1,
    );
    await waitFor(
      'the ack',
      async () => JSON.stringify(await queue!.counts()) === JSON.stringify({ ready: 0, dead: 0 }),
    );
    expect(await paymentCount(message.caller)).toBe(1);
    expect((await events(second!))['executed MessagesController.created']).toBeUndefined();
  });

  itWith('redis')('a job of the same key: completed without running, with no value', async () => {
    const added = await jobs!.queue.add(
      'pay',
      { payer: job.payer, amount: 5, order: job.order },
      { jobId: `second-${job.order}` },
    );
    expect(await added.waitUntilFinished(jobs!.events, 30_000)).toBeNull();
    expect(await paymentCount(job.payer)).toBe(1);
    expect(await events(second!)).toMatchObject({ [`tombstone ${jobs!.name}`]: 1 });
  });
});
