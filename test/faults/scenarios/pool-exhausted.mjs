// The connection pool exhausted: a request that cannot get a connection in time is answered 503
// (with Retry-After), keeps nothing, and its key is free for the retry.
import { setTimeout as sleep } from 'node:timers/promises';
import { check, database, newCaller, newKey, post, startDemo } from '../support.mjs';

export default async function poolExhausted({ databaseUrl }) {
  const demo = await startDemo(databaseUrl, {
    DEMO_POOL_SIZE: '2',
    DEMO_POOL_TIMEOUT_MS: '300',
    DEMO_LATENCY_MS: '2000',
  });
  const db = database(databaseUrl);
  try {
    const caller = newCaller('pool');
    const url = `${demo.url}/payments`;
    const body = { amount: 700, currency: 'EUR' };
    const holders = [post(url, { key: newKey(), caller, body }), post(url, { key: newKey(), caller, body })];
    await sleep(300);
    const key = newKey();
    const starved = await post(url, { key, caller, body });
    check(starved.status === 503, `expected 503 while the pool is exhausted, got ${starved.status}`);
    check(
      starved.json?.type === 'urn:nestjs-pg-idempotency:store-unavailable',
      `unexpected problem ${starved.json?.type}`,
    );
    check(/^\d+$/.test(starved.headers['retry-after'] ?? ''), 'no integer Retry-After on the 503');
    const [{ n }] = await db.rows('SELECT count(*)::int AS n FROM idempotency_keys WHERE key = $1', [key]);
    check(n === 0, 'the starved request left a key row');
    const answers = await Promise.all(holders);
    check(
      answers.every((a) => a.status === 201),
      'the requests holding the pool failed',
    );
    const retry = await post(url, { key, caller, body });
    check(retry.status === 201 && !retry.headers['idempotent-replayed'], `the retry got ${retry.status}`);
    const [{ p }] = await db.rows('SELECT count(*)::int AS p FROM payments WHERE caller = $1', [caller]);
    check(p === 3, `expected 3 payments, found ${p}`);
    return 'a request starved of connections got 503 store-unavailable, kept nothing, and its retry ran once';
  } finally {
    await demo.kill();
    await db.end();
  }
}
