// What docs/storage.md and docs/partitioned-keys.md promise, proved on this app: a retry is
// replayed and the payment written once, without the redacted card token; a dump of
// idempotency_keys shows no key, caller, path, card number or body byte in clear; the key table
// is partitioned and the module made its partitions. `npm run build`, then `npm run check` with
// DATABASE_URL set (the check makes the two encryption keys; the app creates its tables).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { check, database, newKey, proved, send } from '../check-kit.mjs';

const folder = import.meta.dirname;
const db = database(folder);
const env = {
  IDEMPOTENCY_KEY_2026_12: randomBytes(32).toString('base64'),
  IDEMPOTENCY_KEY_2026_06: randomBytes(32).toString('base64'),
};

await check(
  folder,
  async ({ url }) => {
    const token = `alice-${Date.now()}`;
    const key = newKey();
    const payment = { amount: 1250, currency: 'EUR', card: { number: '4242424242424242', cvc: '123' } };
    const first = await send(`${url}/payments`, { key, token, body: payment });
    proved(
      first.status === 201 && first.json.card.token?.startsWith('tok_'),
      'the first answer carries the card token',
    );
    const retry = await send(`${url}/payments`, { key, token, body: payment });
    proved(retry.status === 201 && retry.headers.get('idempotent-replayed') === 'true', 'its retry is replayed');
    proved(
      retry.json.id === first.json.id && retry.json.card.last4 === '4242' && retry.json.card.token === undefined,
      'the replay is the recorded payment without the redacted token',
      retry.text,
    );
    const { rows: payments } = await db.query('SELECT count(*)::int AS n FROM payments WHERE caller = $1', [token]);
    proved(payments[0].n === 1, 'one payment row for the key');

    const { rows } = await db.query(
      `SELECT key, caller, endpoint, response_headers::text AS headers, encode(response_body, 'escape') AS body
       FROM idempotency_keys WHERE created_at > now() - interval '1 minute'`,
    );
    const dump = JSON.stringify(rows);
    proved(
      rows.length > 0 && rows.every((row) => row.key.startsWith('sha256:') && row.caller === ''),
      'keys and callers are digests',
    );
    proved(
      rows.every((row) => row.endpoint.startsWith('sha256:')),
      'paths are digests',
    );
    proved(
      rows.every((row) => row.headers === '{"sealedWith": "2026-12"}'),
      'headers are sealed with the newest key',
    );
    proved(
      ![key, token, '/payments', '4242', 'EUR', first.json.id].some((text) => dump.includes(text)),
      'a dump of the rows shows no key, caller, path, card digit, currency or payment id in clear',
    );
    const { rows: kind } = await db.query(
      `SELECT c.relkind = 'p' AS partitioned, (SELECT count(*)::int FROM pg_inherits WHERE inhparent = c.oid) AS partitions
       FROM pg_class c WHERE c.oid = 'idempotency_keys'::regclass`,
    );
    proved(
      kind[0].partitioned && kind[0].partitions >= 4,
      'idempotency_keys is partitioned, its partitions made at bootstrap',
      kind[0],
    );
  },
  { env },
);

// The resealer finds nothing to do: every row is sealed with the first key already.
const report = JSON.parse(
  execFileSync(process.execPath, ['dist/reseal.js'], {
    cwd: folder,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  }),
);
proved(
  report.resealed === 0 && report.unreadable === 0,
  'the resealer finds every row sealed with the first key',
  report,
);
await db.end();
