// What docs/typeorm.md, docs/http.md, docs/operations.md and docs/testing.md promise, proved on this
// app as a client sees it: a retry gets the first answer's bytes and the payment is written once;
// the same key with another payload is refused; ten duplicates sent at once write one payment;
// the retrying client pays once; the CORS preflight allows the key; the OpenAPI document
// documents it; the health check is up; the conformance kit passes every check. `npm run build`,
// then `npm run check` with DATABASE_URL set (the app creates its tables at startup).
import { execFileSync } from 'node:child_process';
import { check, database, newKey, proved, provePayments, send } from '../check-kit.mjs';

const folder = import.meta.dirname;
const db = database(folder);
const rows = async (caller) =>
  (await db.query('SELECT count(*)::int AS n FROM payments WHERE caller = $1', [caller])).rows[0].n;
const node = (args, env = {}) =>
  execFileSync(process.execPath, args, { cwd: folder, env: { ...process.env, ...env }, encoding: 'utf8' });

await check(folder, async ({ url }) => {
  await provePayments(folder, url, { writes: rows });

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
        await send(`${url}/payments`, {
          key: newKey(),
          token: client,
          body: { amount: 5, currency: 'EUR' },
          headers: { origin: 'https://shop.example' },
        })
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
