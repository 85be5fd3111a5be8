import { randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import Stripe from 'stripe';
import { sql } from '../support/database.js';
import { newCaller } from '../support/http.js';
import { amounts } from '../support/message-consumers.js';
import { type DemoProcess, startAppProcess } from '../support/processes.js';

/** The receiver app (Stripe and GitHub, signatures checked with their SDKs) run as processes. */
const RECEIVER_APP = 'test/e2e/webhook-receiver.app.mjs';
/** The hosts the receivers write through: TypeORM, and the module on a node-postgres pool (Drizzle). */
const HOSTS = ['typeorm', 'drizzle'] as const;

const STRIPE_SECRET = `whsec_${randomUUID().replace(/-/g, '')}`;
const GITHUB_SECRET = `github-${randomUUID()}`;

interface Delivered {
  status: number;
  text: string;
  replayed: boolean;
}

async function post(url: string, payload: string, headers: Record<string, string>): Promise<Delivered> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: payload,
  });
  return {
    status: response.status,
    text: await response.text(),
    replayed: response.headers.get('idempotent-replayed') === 'true',
  };
}

/** A Stripe event whose object is the payment to make (and what the receiver does besides). */
function stripeEvent(payment: { payer: string; amount: number; holdMs?: number; fail?: 'once'; kill?: boolean }) {
  return {
    id: `evt_${randomUUID().replace(/-/g, '')}`,
    object: 'event',
    type: 'payment_intent.succeeded',
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    data: { object: payment },
  };
}

/** Delivers `event` as Stripe does: signed afresh each time (a new timestamp), with `secret`. */
function deliverStripe(app: DemoProcess, event: object, secret = STRIPE_SECRET): Promise<Delivered> {
  const payload = JSON.stringify(event);
  const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret });
  return post(`${app.url}/webhooks/stripe`, payload, { 'stripe-signature': signature });
}

/** `payload` signed by @octokit/webhooks with `secret` (ESM only: in a process of its own). */
async function octokitSignature(payload: string, secret: string): Promise<string> {
  const signing = promisify(execFile)(process.execPath, ['test/support/octokit-sign.mjs', secret]);
  signing.child.stdin!.end(payload);
  return (await signing).stdout;
}

/** Delivers a GitHub webhook: its delivery id, the body signed with `secret` by Octokit. */
async function deliverGitHub(
  app: DemoProcess,
  delivery: string,
  body: object,
  secret = GITHUB_SECRET,
): Promise<Delivered> {
  const payload = JSON.stringify(body);
  const signature = await octokitSignature(payload, secret);
  return post(`${app.url}/webhooks/github`, payload, {
    'x-github-delivery': delivery,
    'x-github-event': 'check_run',
    'x-hub-signature-256': signature,
  });
}

function keyRows(key: string): Promise<Array<{ caller: string; state: string }>> {
  return sql('SELECT caller, state FROM idempotency_keys WHERE key = $1', [key]);
}

describe.each(HOSTS)("webhook receivers on the %s host, with processes and the providers' SDKs", (host) => {
  const apps: DemoProcess[] = [];
  const started = async (env: Record<string, string> = {}) => {
    const app = await startAppProcess(RECEIVER_APP, {
      HOST: host,
      STRIPE_WEBHOOK_SECRET: STRIPE_SECRET,
      GITHUB_WEBHOOK_SECRET: GITHUB_SECRET,
      ...env,
    });
    apps.push(app);
    return app;
  };
  let first: DemoProcess;
  let second: DemoProcess;
  beforeAll(async () => {
    [first, second] = await Promise.all([started(), started()]);
  });
  afterAll(async () => {
    await Promise.all(apps.splice(0).map((app) => app.kill().catch(() => undefined)));
  });

  it('a Stripe event delivered 3 times at once over two processes, then once late: one payment, every delivery 200 with the same body, the late one a replay', async () => {
    const payer = newCaller();
    const event = stripeEvent({ payer, amount: 11, holdMs: 300 });
    const together = await Promise.all([first, second, first].map((app) => deliverStripe(app, event)));
    const late = await deliverStripe(second, event);
    const answers = [...together, late];
    expect(answers.map(({ status }) => status)).toEqual([200, 200, 200, 200]);
    expect(answers.filter(({ replayed }) => !replayed)).toHaveLength(1);
    expect(new Set(answers.map(({ text }) => text))).toEqual(new Set([JSON.stringify({ received: event.id })]));
    expect(late.replayed).toBe(true);
    expect(await amounts(payer)).toEqual([11]);
    expect(await keyRows(event.id)).toEqual([{ caller: 'stripe', state: 'completed' }]);
  });

  it('a GitHub delivery sent 3 times at once over two processes, then once late (X-GitHub-Delivery): one payment, every delivery 200', async () => {
    const [payer, delivery] = [newCaller(), randomUUID()];
    const body = { action: 'completed', payer, amount: 12 };
    const together = await Promise.all([first, second, second].map((app) => deliverGitHub(app, delivery, body)));
    const late = await deliverGitHub(first, delivery, body);
    expect([...together, late].map(({ status }) => status)).toEqual([200, 200, 200, 200]);
    expect([...together, late].filter(({ replayed }) => !replayed)).toHaveLength(1);
    expect(late).toMatchObject({ replayed: true, text: JSON.stringify({ received: delivery }) });
    expect(await amounts(payer)).toEqual([12]);
    expect(await keyRows(delivery)).toEqual([{ caller: 'github', state: 'completed' }]);
  });

  it("a forged signature is refused 400 by the app's guard before the key is reserved: no key, no payment; the genuine delivery then runs", async () => {
    const payer = newCaller();
    const event = stripeEvent({ payer, amount: 13 });
    const forged = await deliverStripe(first, event, `whsec_${randomUUID().replace(/-/g, '')}`);
    const delivery = randomUUID();
    const forgedGitHub = await deliverGitHub(second, delivery, { payer, amount: 14 }, 'another secret');
    expect([forged.status, forgedGitHub.status]).toEqual([400, 400]);
    expect(await keyRows(event.id)).toEqual([]);
    expect(await keyRows(delivery)).toEqual([]);
    expect(await amounts(payer)).toEqual([]);
    expect((await deliverStripe(first, event)).status).toBe(200);
    expect((await deliverGitHub(second, delivery, { payer, amount: 14 })).status).toBe(200);
    expect(await amounts(payer)).toEqual([13, 14]);
  });

  it('50 deliveries of one Stripe event at once over two processes: one payment, all 50 answered 200', async () => {
    const payer = newCaller();
    const event = stripeEvent({ payer, amount: 15, holdMs: 200 });
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => deliverStripe(i % 2 ? first : second, event)),
    );
    expect(answers.filter(({ status }) => status !== 200)).toEqual([]);
    expect(answers.filter(({ replayed }) => !replayed)).toHaveLength(1);
    expect(await amounts(payer)).toEqual([15]);
  });

  it('a receiver that writes and then throws answers 500 and keeps nothing (no payment, no key); the redelivery runs it once', async () => {
    const payer = newCaller();
    const event = stripeEvent({ payer, amount: 16, fail: 'once' });
    expect((await deliverStripe(first, event)).status).toBe(500);
    expect(await amounts(payer)).toEqual([]);
    expect(await keyRows(event.id)).toEqual([]);
    const redelivered = await deliverStripe(first, event);
    expect([redelivered.status, redelivered.replayed]).toEqual([200, false]);
    expect(await amounts(payer)).toEqual([16]);
  });

  it('a process SIGKILLed after its write, before the commit, keeps nothing: the redelivery to another process runs it once', async () => {
    const [victim, survivor] = await Promise.all([started(), started({ SURVIVES: '1' })]);
    const payer = newCaller();
    const event = stripeEvent({ payer, amount: 17, kill: true });
    await expect(deliverStripe(victim, event)).rejects.toThrow('fetch failed');
    // Until PostgreSQL notices the dead connection, the key is held: the redelivery waits for it (`wait`).
    const redelivered = await deliverStripe(survivor, event);
    expect([redelivered.status, redelivered.replayed]).toEqual([200, false]);
    expect(await amounts(payer)).toEqual([17]);
    expect(await keyRows(event.id)).toEqual([{ caller: 'stripe', state: 'completed' }]);
  });
});
