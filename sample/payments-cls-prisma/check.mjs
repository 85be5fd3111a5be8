// What docs/prisma.md promises of @nestjs-cls/transactional on Prisma, proved on this app as a
// client sees it: the payment and its ledger entry, written by a @Transactional() service through
// TransactionHost, commit with the key, so a retry gets the first answer's bytes and the payment is
// written once; the same key with another payload is refused; a handler that fails after the
// service wrote leaves neither row and its key free; ten duplicates sent at once write one payment;
// and all of it with no TypeORM installed. `npm run build`, then `npm run migrate` and
// `npm run check` with DATABASE_URL set.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { check, database, newKey, proved, send } from '../check-kit.mjs';

const folder = import.meta.dirname;
const installed = (name) => {
  try {
    createRequire(join(folder, 'package.json')).resolve(name);
    return true;
  } catch {
    return false;
  }
};
const db = database(folder);
const count = async (table, caller) =>
  (await db.query(`SELECT count(*)::int AS n FROM ${table} WHERE caller = $1`, [caller])).rows[0].n;
const entries = async (caller) =>
  (
    await db.query(
      'SELECT count(*)::int AS n FROM ledger_entries JOIN payments ON payments.id = payment_id WHERE caller = $1',
      [caller],
    )
  ).rows[0].n;

await check(folder, async ({ url }) => {
  proved(!installed('typeorm') && !installed('@nestjs/typeorm'), 'no TypeORM installed');
  const token = `alice-${Date.now()}`;
  const key = newKey();
  const payment = { amount: 1250, currency: 'EUR' };
  const first = await send(`${url}/payments`, { key, token, body: payment });
  proved(first.status === 201, 'a keyed POST /payments is 201', first.status);
  const retry = await send(`${url}/payments`, { key, token, body: payment });
  proved(retry.status === 201 && retry.text === first.text, 'its retry gets the same status and bytes', retry.text);
  proved(retry.headers.get('idempotent-replayed') === 'true', 'the retry is marked Idempotent-Replayed: true');
  proved(
    (await count('payments', token)) === 1 && (await entries(token)) === 1,
    'one payment row and one ledger entry for the key',
  );
  const other = await send(`${url}/payments`, { key, token, body: { amount: 99, currency: 'EUR' } });
  proved(other.status === 422, 'the same key with another payload is 422', other.status);

  const carol = `carol-${Date.now()}`;
  const failing = newKey();
  const failed = await send(`${url}/payments/fail-after-write`, {
    key: failing,
    token: carol,
    body: payment,
    headers: { 'x-fail': 'after-write' },
  });
  proved(failed.status === 500, 'a handler that fails after its @Transactional() writes is 500', failed.status);
  proved((await count('payments', carol)) === 0 && (await entries(carol)) === 0, 'it leaves no payment row, no entry');
  proved((await count('idempotency_keys', carol)) === 0, 'and no key row: the key is free');
  const rerun = await send(`${url}/payments/fail-after-write`, { key: failing, token: carol, body: payment });
  proved(
    rerun.status === 201 && rerun.headers.get('idempotent-replayed') === null,
    'its retry runs (201, not a replay)',
    rerun.status,
  );
  proved(
    (await count('payments', carol)) === 1 && (await count('idempotency_keys', carol)) === 1,
    'and pays once, its key now recorded',
  );

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
  proved(
    (await count('payments', storm)) === 1 && (await entries(storm)) === 1,
    'ten duplicates at once write one payment and one entry',
  );
});
await db.end();
