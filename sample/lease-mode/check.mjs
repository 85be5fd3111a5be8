// What docs/lease-mode.md promises, proved on this app and a stand-in card processor (a server of
// its own, card-processor.mjs): a retry gets the first answer's bytes and the processor is called
// once for the key; a new key is a new refund; an answer lost after the processor made the refund
// is retried to the same refund; ten duplicates at once call the processor once. `npm run build`
// and `npm run migrate`, then `npm run check` with DATABASE_URL set.
import { randomUUID } from 'node:crypto';
import { startCardProcessor } from './card-processor.mjs';
import { check, database, newKey, proved, send } from '../check-kit.mjs';

const folder = import.meta.dirname;
const db = database(folder);
const processor = await startCardProcessor({ latencyMs: 300 });
const rows = async (paymentId) =>
  (await db.query('SELECT count(*)::int AS n FROM refunds WHERE payment_id = $1', [paymentId])).rows[0].n;
/** What the processor saw for a payment: the calls each idempotency key got. */
const calls = (paymentId) => processor.refundsOf(paymentId).map((refund) => refund.calls);

await check(
  folder,
  async ({ url }) => {
    const token = `alice-${Date.now()}`;
    const refund = (paymentId, key, amount) =>
      send(`${url}/payments/${paymentId}/refunds`, { key, token, body: { amount } });

    const payment = randomUUID();
    const key = newKey();
    const first = await refund(payment, key, 500);
    proved(
      first.status === 201 && first.json?.providerRefundId?.startsWith('re_'),
      'a keyed refund is 201',
      first.text,
    );
    const retry = await refund(payment, key, 500);
    proved(retry.status === 201 && retry.text === first.text, 'its retry gets the same status and bytes', retry.text);
    proved(retry.headers.get('idempotent-replayed') === 'true', 'the retry is marked Idempotent-Replayed: true');
    proved(
      JSON.stringify(calls(payment)) === '[1]' && (await rows(payment)) === 1,
      'the processor was called once, with one key; one refund row',
      calls(payment),
    );
    const another = await refund(payment, newKey(), 200);
    proved(
      another.status === 201 && another.json.providerRefundId !== first.json.providerRefundId,
      'another key is another refund',
      another.text,
    );
    proved(JSON.stringify(calls(payment)) === '[1,1]', 'made with a derived key of its own', calls(payment));

    const lost = randomUUID();
    const lostKey = newKey();
    processor.failAnswers(1);
    const failed = await refund(lost, lostKey, 300);
    proved(
      failed.status === 500 && (await rows(lost)) === 0,
      'the processor made the refund but its answer was lost: 500, nothing recorded',
      failed.status,
    );
    const again = await refund(lost, lostKey, 300);
    proved(
      again.status === 201 && again.headers.get('idempotent-replayed') === null,
      'the retry runs the route again: 201',
      again.status,
    );
    proved(
      JSON.stringify(calls(lost)) === '[2]' && (await rows(lost)) === 1,
      'with the same derived key: the processor got it twice and refunded once; one refund row',
      calls(lost),
    );

    const busy = randomUUID();
    const busyKey = newKey();
    const answers = await Promise.all(Array.from({ length: 10 }, () => refund(busy, busyKey, 100)));
    const statuses = answers.map((answer) => answer.status).sort();
    proved(
      statuses.filter((status) => status === 201).length >= 1 &&
        statuses.every((status) => status === 201 || status === 409),
      'ten duplicates at once: 201s (the first and replays) and 409s (the lease held)',
      statuses,
    );
    const conflicts = answers.filter((answer) => answer.status === 409);
    proved(
      conflicts.length >= 1 && conflicts.every((answer) => Number(answer.headers.get('retry-after')) >= 25),
      'each 409 says Retry-After: the seconds left on the 30 s lease',
      conflicts.map((answer) => answer.headers.get('retry-after')),
    );
    proved(
      JSON.stringify(calls(busy)) === '[1]' && (await rows(busy)) === 1,
      'ten duplicates at once call the processor once; one refund row',
      calls(busy),
    );
    const settled = await refund(busy, busyKey, 100);
    proved(
      settled.status === 201 && settled.text === answers.find((answer) => answer.status === 201).text,
      'a retry after them gets the same bytes',
      settled.text,
    );
  },
  { env: { PROCESSOR_URL: processor.url } },
);
await processor.close();
await db.end();
