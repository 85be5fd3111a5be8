// The clients of the failover suite: `count` clients, each sending one logical payment after
// another by the README's client rules (the package's IdempotentClient: one key per operation,
// the same key on every attempt, backoff with jitter, Retry-After honoured), spread over the app
// processes. Each operation is its own caller (the demo's bearer token), so the table tells how
// many times each key's payment was written. Every answer of every attempt is kept. Another
// operation (lease mode's refunds) is given as `target`: its path, caller and body per client.
import { setTimeout as sleep } from 'node:timers/promises';
import { IdempotentClient } from '../../dist/esm/client/index.js';

/** A new payment per operation, its caller the operation's own. */
const paymentPerOperation = {
  path: () => '/payments',
  caller: (index, n) => `fo-${index}-${n}-${Date.now()}`,
  body: (index) => JSON.stringify({ amount: 1000 + (index % 100), currency: 'EUR' }),
};

/**
 * Runs the clients until `stop` resolves; resolves every operation (its caller, key, final
 * status and answer's `id`) and every attempt's answer.
 */
export async function driveClients({ apps, count = 32, stop, target = paymentPerOperation }) {
  const operations = [];
  const attempts = [];
  let stopping = false;
  stop.then(() => (stopping = true));
  const loop = async (index) => {
    const app = apps[index % apps.length];
    while (!stopping) {
      const operation = { started: Date.now(), attempts: 0, answers: [] };
      operations.push(operation);
      const client = new IdempotentClient({
        maxAttempts: 200,
        baseDelayMs: 50,
        maxDelayMs: 2000,
        attemptTimeoutMs: 10_000,
        fetch: async (url, init) => {
          const at = Date.now();
          operation.attempts++;
          try {
            const response = await fetch(url, init);
            const answer = { at, status: response.status, retryAfter: response.headers.get('retry-after') };
            attempts.push(answer);
            operation.answers.push({ ...answer, ms: Date.now() - at, type: response.headers.get('content-type') });
            return response;
          } catch (error) {
            const answer = { at, status: 0, error: String(error?.cause?.code ?? error?.message ?? error) };
            attempts.push(answer);
            operation.answers.push({ ...answer, ms: Date.now() - at });
            throw error;
          }
        },
      });
      operation.caller = target.caller(index, operations.length);
      operation.body = target.body(index);
      try {
        const result = await client.fetch(`${app.url}${target.path(index)}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${operation.caller}`, 'content-type': 'application/json' },
          body: operation.body,
        });
        operation.key = result.key;
        operation.status = result.response.status;
        operation.replayed = result.replayed;
        const text = await result.response.text();
        if (operation.status === 201) operation.id = JSON.parse(text).id;
      } catch (error) {
        operation.status = 0;
        operation.error = String(error?.message ?? error);
      }
      operation.ended = Date.now();
      if (operation.status !== 201) await sleep(50);
    }
  };
  await Promise.all(Array.from({ length: count }, (_, index) => loop(index)));
  return { operations, attempts };
}
