// What docs/webhooks.md promises, proved on this app as the providers deliver: each delivery signed
// with the provider's SDK, a redelivery signed afresh. A Stripe event delivered twice (the second
// time with another pending_webhooks count, as Stripe sends it) and a GitHub delivery sent twice
// each write one row, every delivery answered 200, the redelivery replayed; a forged signature is
// refused before the key is reserved, and writes and keeps nothing. `npm run build`, then
// `npm run check` with DATABASE_URL set (the app creates its tables at startup).
import { randomBytes, randomUUID } from 'node:crypto';
import { Webhooks } from '@octokit/webhooks';
import Stripe from 'stripe';
import { check, database, proved, send } from '../check-kit.mjs';

const folder = import.meta.dirname;
const db = database(folder);
const count = async (sql, value) => (await db.query(sql, [value])).rows[0].n;
const keyRows = async (key) =>
  (await db.query('SELECT caller, state FROM idempotency_keys WHERE key = $1', [key])).rows;

const stripeSecret = `whsec_${randomBytes(24).toString('hex')}`;
const githubSecret = randomBytes(24).toString('hex');

/** Delivers `event` as Stripe does: the JSON signed with `secret` and the time of this delivery. */
function deliverStripe(url, event, secret = stripeSecret) {
  const payload = JSON.stringify(event);
  const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret });
  return send(`${url}/webhooks/stripe`, { body: payload, headers: { 'stripe-signature': signature } });
}

/** Delivers a GitHub webhook: its delivery id and event name, the JSON signed by Octokit with `secret`. */
async function deliverGitHub(url, delivery, payload, secret = githubSecret) {
  const body = JSON.stringify(payload);
  const signature = await new Webhooks({ secret }).sign(body);
  return send(`${url}/webhooks/github`, {
    body,
    headers: { 'x-github-delivery': delivery, 'x-github-event': 'check_run', 'x-hub-signature-256': signature },
  });
}

await check(
  folder,
  async ({ url }) => {
    const customer = `cus_${randomBytes(8).toString('hex')}`;
    const event = {
      id: `evt_${randomBytes(12).toString('hex')}`,
      object: 'event',
      api_version: '2026-01-28.clover',
      created: Math.floor(Date.now() / 1000),
      data: {
        object: {
          id: `pi_${randomBytes(12).toString('hex')}`,
          object: 'payment_intent',
          amount: 2000,
          currency: 'eur',
          customer,
          status: 'succeeded',
        },
      },
      livemode: false,
      pending_webhooks: 2,
      request: { id: null, idempotency_key: null },
      type: 'payment_intent.succeeded',
    };
    const payments = () => count('SELECT count(*)::int AS n FROM payments WHERE customer = $1', customer);

    const forged = await deliverStripe(url, event, `whsec_${randomBytes(24).toString('hex')}`);
    proved(forged.status === 400, 'a Stripe delivery with a forged signature is refused 400', forged.status);
    proved((await payments()) === 0 && (await keyRows(event.id)).length === 0, 'it wrote no payment and kept no key');

    const first = await deliverStripe(url, event);
    proved(first.status === 200, 'a Stripe event is answered 200', `${first.status} ${first.text}`);
    // Stripe redelivers the event with the count of endpoints still to be told: the body differs.
    const again = await deliverStripe(url, { ...event, pending_webhooks: 1 });
    proved(
      again.status === 200 && again.text === first.text,
      'its redelivery (another pending_webhooks, signed afresh) is answered 200 with the same bytes',
      `${again.status} ${again.text}`,
    );
    proved(again.headers.get('idempotent-replayed') === 'true', 'the redelivery is replayed, not run (no 422)');
    proved((await payments()) === 1, 'one payment for the event');
    proved(
      JSON.stringify(await keyRows(event.id)) === JSON.stringify([{ caller: 'stripe', state: 'completed' }]),
      "the event's key is kept in Stripe's scope",
    );

    const delivery = randomUUID();
    const checkRun = { action: 'completed', check_run: { id: Date.now(), status: 'completed', conclusion: 'success' } };
    const events = () => count('SELECT count(*)::int AS n FROM github_events WHERE delivery = $1', delivery);
    const forgedGitHub = await deliverGitHub(url, delivery, checkRun, 'another secret');
    proved(
      forgedGitHub.status === 400,
      'a GitHub delivery with a forged signature is refused 400',
      forgedGitHub.status,
    );
    proved((await events()) === 0 && (await keyRows(delivery)).length === 0, 'it wrote no row and kept no key');
    const delivered = await deliverGitHub(url, delivery, checkRun);
    proved(delivered.status === 200, 'a GitHub delivery is answered 200', `${delivered.status} ${delivered.text}`);
    const redelivered = await deliverGitHub(url, delivery, checkRun);
    proved(
      redelivered.status === 200 &&
        redelivered.text === delivered.text &&
        redelivered.headers.get('idempotent-replayed') === 'true',
      'its redelivery (the same X-GitHub-Delivery) is answered 200, replayed',
      `${redelivered.status} ${redelivered.text}`,
    );
    proved((await events()) === 1, 'one github_events row for the delivery');
  },
  { env: { STRIPE_WEBHOOK_SECRET: stripeSecret, GITHUB_WEBHOOK_SECRET: githubSecret } },
);
await db.end();
