// What docs/prisma.md promises, proved on this app as a client sees it: the payment and its ledger
// entry, written through IdempotentPrisma, commit with the key, so a retry gets the first answer's
// bytes and the payment is written once; the same key with another payload is refused; a handler
// that fails after its writes leaves neither row and its key free; ten duplicates sent at once
// write one payment; and all of it with no TypeORM installed. `npm run build`, then
// `npm run migrate` and `npm run check` with DATABASE_URL set.
import { check, database, installed, proved, provePayments } from '../check-kit.mjs';

const folder = import.meta.dirname;
const db = database(folder);
/** The caller's payments, when each has its ledger entry (else -1: a payment written without its entry). */
const writes = async (caller) => {
  const { rows } = await db.query(
    `SELECT count(*)::int AS payments, count(ledger_entries.id)::int AS entries
     FROM payments LEFT JOIN ledger_entries ON ledger_entries.payment_id = payments.id WHERE caller = $1`,
    [caller],
  );
  return rows[0].payments === rows[0].entries ? rows[0].payments : -1;
};

await check(folder, async ({ url }) => {
  proved(!installed(folder, 'typeorm') && !installed(folder, '@nestjs/typeorm'), 'no TypeORM installed');
  await provePayments(folder, url, {
    writes,
    what: 'payment row and ledger entry',
    failAfterWrite: '/payments/fail-after-write',
  });
});
await db.end();
