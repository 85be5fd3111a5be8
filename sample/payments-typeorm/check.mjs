// What docs/typeorm.md promises, proved on this app as a client sees it: a retry gets the first
// answer's bytes and the payment is written once; the same key with another payload is refused;
// ten duplicates sent at once write one payment. `npm run build`, then `npm run check` with
// DATABASE_URL set (the app creates its tables at startup).
import { check, database, newKey, proved, send } from '../check-kit.mjs';

const folder = import.meta.dirname;
const db = database(folder);
const rows = async (caller) =>
  (await db.query('SELECT count(*)::int AS n FROM payments WHERE caller = $1', [caller])).rows[0].n;

await check(folder, async ({ url }) => {
  const token = `alice-${Date.now()}`;
  const key = newKey();
  const payment = { amount: 1250, currency: 'EUR' };
  const first = await send(`${url}/payments`, { key, token, body: payment });
  proved(first.status === 201, 'a keyed POST /payments is 201', first.status);
  const retry = await send(`${url}/payments`, { key, token, body: payment });
  proved(retry.status === 201 && retry.text === first.text, 'its retry gets the same status and bytes', retry.text);
  proved(retry.headers.get('idempotent-replayed') === 'true', 'the retry is marked Idempotent-Replayed: true');
  proved((await rows(token)) === 1, 'one payment row for the key');
  const other = await send(`${url}/payments`, { key, token, body: { amount: 99, currency: 'EUR' } });
  proved(other.status === 422, 'the same key with another payload is 422', other.status);
  const bob = await send(`${url}/payments`, { key, token: `bob-${Date.now()}`, body: payment });
  proved(bob.status === 201 && bob.headers.get('idempotent-replayed') === null, "another caller's key is its own");
  proved((await send(`${url}/payments`, { token, body: payment })).status === 400, 'no key is 400');

  const storm = `storm-${Date.now()}`;
  const stormKey = newKey();
  const answers = await Promise.all(
    Array.from({ length: 10 }, () => send(`${url}/payments`, { key: stormKey, token: storm, body: payment })),
  );
  const statuses = answers.map((answer) => answer.status).sort();
  proved(
    statuses.every((status) => status === 201 || status === 409) && statuses.includes(201),
    'ten duplicates at once: 201s (the first and replays) and 409s (in flight), nothing else',
    statuses,
  );
  proved((await rows(storm)) === 1, 'ten duplicates at once write one payment');
});
await db.end();
