// What docs/cls.md promises, proved on this app as a client sees it: the payment a @Transactional()
// service writes through TransactionHost commits with the key, so a retry gets the first answer's
// bytes and the payment is written once; the same key with another payload is refused; a handler
// that fails after the service wrote leaves no payment and its key free; ten duplicates sent at
// once write one payment. `npm run build`, then `npm run check` with DATABASE_URL set (the app
// creates its tables at startup).
import { check, database, provePayments } from '../check-kit.mjs';

const folder = import.meta.dirname;
const db = database(folder);
const writes = async (caller) =>
  (await db.query('SELECT count(*)::int AS n FROM payments WHERE caller = $1', [caller])).rows[0].n;

await check(folder, ({ url }) => provePayments(folder, url, { writes, failAfterWrite: '/payments/fail-after-write' }));
await db.end();
