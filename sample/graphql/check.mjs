// What docs/graphql.md promises, proved on this app as a GraphQL client sees it: a keyed mutation
// sent twice runs once and both answers carry the same payment; the same key with another
// argument is IDEMPOTENCY_KEY_PARAMETER_MISMATCH; a mutation without a caller is UNAUTHENTICATED;
// a key in an argument works the same; no refusal carries a stack trace. `npm run build`, then
// `npm run check` with DATABASE_URL set (the app creates its tables at startup).
import { check, database, newKey, proved, send } from '../check-kit.mjs';

const folder = import.meta.dirname;
const db = database(folder);
const count = async (table, caller) =>
  (await db.query(`SELECT count(*)::int AS n FROM ${table} WHERE caller = $1`, [caller])).rows[0].n;

const CREATE_PAYMENT = `mutation Pay($amount: Int!, $currency: String!) {
  createPayment(amount: $amount, currency: $currency) { id amount currency createdAt }
}`;
const REFUND_PAYMENT = `mutation Refund($key: String!, $paymentId: ID!, $amount: Int!) {
  refundPayment(idempotencyKey: $key, paymentId: $paymentId, amount: $amount) { id paymentId amount }
}`;
/** The codes of an answer's errors. */
const codes = (answer) => (answer.json?.errors ?? []).map((error) => error.extensions?.code);

await check(folder, async ({ url }) => {
  const graphql = (query, variables, { key, token } = {}) =>
    send(`${url}/graphql`, { body: { query, variables }, key, token });
  const token = `alice-${Date.now()}`;
  const key = newKey();

  const first = await graphql(CREATE_PAYMENT, { amount: 1250, currency: 'EUR' }, { key, token });
  const payment = first.json?.data?.createPayment;
  proved(first.status === 200 && payment?.amount === 1250, 'a keyed createPayment answers its payment', first.text);
  const retry = await graphql(CREATE_PAYMENT, { amount: 1250, currency: 'EUR' }, { key, token });
  proved(retry.text === first.text, 'its retry gets the same answer: the same payment', retry.text);
  proved((await count('payments', token)) === 1, 'one payment row for the key');

  const other = await graphql(CREATE_PAYMENT, { amount: 99, currency: 'EUR' }, { key, token });
  proved(
    codes(other).join() === 'IDEMPOTENCY_KEY_PARAMETER_MISMATCH' && other.json.data === null,
    'the same key with another amount is IDEMPOTENCY_KEY_PARAMETER_MISMATCH',
    other.text,
  );
  proved(
    other.json.errors.every((error) => error.extensions.stacktrace === undefined),
    'the refusal carries no stack trace (includeStacktraceInErrorResponses: false)',
  );
  proved((await count('payments', token)) === 1, 'it wrote nothing');

  const before = (await db.query('SELECT count(*)::int AS n FROM payments')).rows[0].n;
  const anonymous = await graphql(CREATE_PAYMENT, { amount: 1250, currency: 'EUR' }, { key: newKey() });
  proved(
    codes(anonymous).join() === 'UNAUTHENTICATED',
    'a keyed mutation without a caller is UNAUTHENTICATED',
    anonymous.text,
  );
  const after = (await db.query('SELECT count(*)::int AS n FROM payments')).rows[0].n;
  proved(after === before, 'it wrote nothing');

  const refund = { key: `refund-${newKey()}`, paymentId: payment.id, amount: 250 };
  const refunded = await graphql(REFUND_PAYMENT, refund, { token });
  proved(
    refunded.json?.data?.refundPayment?.amount === 250,
    'a refund keyed by its idempotencyKey argument runs',
    refunded.text,
  );
  const again = await graphql(REFUND_PAYMENT, refund, { token });
  proved(
    again.text === refunded.text && (await count('refunds', token)) === 1,
    'its retry gets the same refund, written once',
  );
});
await db.end();
