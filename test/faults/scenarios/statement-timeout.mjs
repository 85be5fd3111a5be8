// A statement timeout hit mid-request (the payments table is locked by someone else): 503, the
// business write and the key rolled back, and the retry runs once the lock is gone.
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { check, database, newCaller, newKey, post, startDemo } from '../support.mjs';

export default async function statementTimeout({ databaseUrl }) {
  const url = new URL(databaseUrl);
  url.searchParams.set('options', '-c statement_timeout=500');
  const demo = await startDemo(url.toString());
  const db = database(databaseUrl);
  const locker = new pg.Client({ connectionString: databaseUrl });
  await locker.connect();
  try {
    const caller = newCaller('timeout');
    const key = newKey();
    const body = { amount: 900, currency: 'EUR' };
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE payments IN ACCESS EXCLUSIVE MODE');
    const timedOut = await post(`${demo.url}/payments`, { key, caller, body });
    check(timedOut.status === 503, `expected 503 on a statement timeout, got ${timedOut.status}: ${timedOut.body}`);
    check(
      timedOut.json?.type === 'urn:nestjs-pg-idempotency:store-unavailable',
      `unexpected problem ${timedOut.json?.type}`,
    );
    await locker.query('ROLLBACK');
    await sleep(50);
    const [{ n }] = await db.rows('SELECT count(*)::int AS n FROM idempotency_keys WHERE key = $1', [key]);
    check(n === 0, 'the timed-out request left its key');
    const retry = await post(`${demo.url}/payments`, { key, caller, body });
    check(retry.status === 201 && !retry.headers['idempotent-replayed'], `the retry got ${retry.status}`);
    const [{ p }] = await db.rows('SELECT count(*)::int AS p FROM payments WHERE caller = $1', [caller]);
    check(p === 1, `expected 1 payment, found ${p}`);
    return 'a statement timeout mid-request answered 503, kept nothing, freed the key; the retry ran once';
  } finally {
    await locker.end().catch(() => undefined);
    await demo.kill();
    await db.end();
  }
}
