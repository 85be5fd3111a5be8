// Many clients, each paying (and refunding) a list of logical operations with a careful,
// retrying client, then the ledger check: every logical operation exists exactly once and every
// client's final answer is the recorded one.
import { check, newCaller, newKey, postWithRetries, stats } from './support.mjs';

/** `clients` clients; each will pay logical payments 1, 2, 3… (the amount names the payment). */
export function planPayments(scenario, clients) {
  return Array.from({ length: clients }, () => ({ caller: newCaller(scenario), payments: [] }));
}

/**
 * Every client pays one logical payment after another (at least `minimum`) until `until()` says
 * stop, the clients concurrently, against `baseUrl()`.
 */
export async function runPayments(plan, baseUrl, until, minimum = 3) {
  await Promise.all(
    plan.map(async (client) => {
      while (client.payments.length < minimum || !until()) {
        const payment = { key: newKey(), amount: client.payments.length + 1 };
        client.payments.push(payment);
        const { answer } = await postWithRetries(() => `${baseUrl()}/payments`, {
          key: payment.key,
          caller: client.caller,
          body: { amount: payment.amount, currency: 'EUR' },
        });
        payment.final = answer;
      }
    }),
  );
}

/** Counts duplicates and lost writes into `stats`; throws if there is any. */
export async function checkPayments(plan, db) {
  let duplicates = 0;
  let lost = 0;
  for (const client of plan) {
    const rows = await db.rows('SELECT id, amount FROM payments WHERE caller = $1', [client.caller]);
    const stored = await db.rows('SELECT key, response_body FROM idempotency_keys WHERE caller = $1', [client.caller]);
    for (const payment of client.payments) {
      const matching = rows.filter((row) => row.amount === payment.amount);
      if (matching.length > 1) duplicates += matching.length - 1;
      if (matching.length === 0) lost++;
      check(payment.final.status === 201, `a final answer was ${payment.final.status}`);
      const record = stored.find((row) => row.key === payment.key);
      check(
        record && Buffer.compare(record.response_body, payment.final.body) === 0,
        'a final answer differs from the recorded one',
      );
      check(matching.length !== 1 || payment.final.json.id === matching[0].id, 'a final answer names another payment');
    }
  }
  stats.duplicates += duplicates;
  stats.lostWrites += lost;
  check(duplicates === 0 && lost === 0, `${duplicates} duplicates, ${lost} lost writes`);
  return plan.reduce((sum, client) => sum + client.payments.length, 0);
}
