// What docs/typeorm.md, docs/http.md, docs/operations.md and docs/testing.md promise, proved on this
// app as a client sees it: a retry gets the first answer's bytes and the payment is written once;
// the same key with another payload is refused; ten duplicates sent at once write one payment;
// the retrying client pays once; the CORS preflight allows the key; the OpenAPI document
// documents it; the health check is up; the conformance kit passes every check. `npm run build`,
// then `npm run check` with DATABASE_URL set (the app creates its tables at startup).
import { execFileSync } from 'node:child_process';
import { check, database, newKey, proved, send } from '../check-kit.mjs';

const folder = import.meta.dirname;
const db = database(folder);
const rows = async (caller) =>
  (await db.query('SELECT count(*)::int AS n FROM payments WHERE caller = $1', [caller])).rows[0].n;
const node = (args, env = {}) =>
  execFileSync(process.execPath, args, { cwd: folder, env: { ...process.env, ...env }, encoding: 'utf8' });

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

  const client = `client-${Date.now()}`;
  const paid = JSON.parse(node(['dist/client.js'], { API_URL: url, API_TOKEN: client }));
  proved(paid.status === 201 && paid.attempts === 1 && (await rows(client)) === 1, 'the retrying client pays once');

  const preflight = await send(`${url}/payments`, {
    method: 'OPTIONS',
    headers: {
      origin: 'https://shop.example',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'idempotency-key,content-type',
    },
  });
  proved(
    /idempotency-key/i.test(preflight.headers.get('access-control-allow-headers') ?? ''),
    'the CORS preflight allows Idempotency-Key',
    preflight.headers.get('access-control-allow-headers'),
  );
  proved(
    /idempotent-replayed/i.test(
      (
        await send(`${url}/payments`, { key, token, body: payment, headers: { origin: 'https://shop.example' } })
      ).headers.get('access-control-expose-headers') ?? '',
    ),
    'a cross-origin script may read Idempotent-Replayed',
  );
  const openapi = (await send(`${url}/docs-json`, { method: 'GET' })).json;
  proved(
    openapi?.paths?.['/payments']?.post?.parameters?.some((parameter) => parameter.name === 'Idempotency-Key'),
    'the OpenAPI document gives POST /payments its Idempotency-Key header',
  );
  const health = await send(`${url}/health`, { method: 'GET' });
  proved(
    health.status === 200 && health.json?.info?.idempotency?.status === 'up',
    'the health check is up',
    health.text,
  );
});

// The conformance kit, from the sample's own test (it starts the app in its process).
const kit = node(['--test', '--test-reporter=spec', 'test/']);
proved(
  (kit.match(/^passed: /gm) ?? []).length === 6 &&
    /^passed: the key's commit fails after the handler wrote/m.test(kit) &&
    /^skipped: a handler that fails after its writes/m.test(kit),
  "the conformance kit passes, the key's failed commit included (the check of a failing request is skipped: none given)",
  kit,
);
await db.end();
