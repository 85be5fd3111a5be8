// What docs/drizzle.md promises, proved on this app as a client sees it: the payment written through
// IdempotentDrizzle commits with the key, so a retry gets the first answer's bytes and the payment
// is written once; the same key with another payload is refused; a handler that fails after its
// write leaves no payment and its key free; ten duplicates sent at once write one payment; and all
// of it with no TypeORM installed. `npm run build`, then `npm run migrate` and `npm run check` with
// DATABASE_URL set.
import { check, database, installed, proved, provePayments } from '../check-kit.mjs';

const folder = import.meta.dirname;
const db = database(folder);
const writes = async (caller) =>
  (await db.query('SELECT count(*)::int AS n FROM payments WHERE caller = $1', [caller])).rows[0].n;

await check(folder, async ({ url }) => {
  proved(!installed(folder, 'typeorm') && !installed(folder, '@nestjs/typeorm'), 'no TypeORM installed');
  await provePayments(folder, url, { writes, failAfterWrite: '/payments/fail-after-write' });
});
await db.end();
