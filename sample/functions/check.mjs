// What docs/functions.md promises, proved on this app: a payout runs once per id, whoever asks (the
// route or the script): a second call is `replayed` with the recorded value and does not run; its
// writes commit with the key, or (failed, refused) are undone; each outcome the page lists that a
// caller can bring about; and the hourly report, ticking every 2 s on two instances, runs each slot
// once. `npm run build` and `npm run migrate`, then `npm run check` with DATABASE_URL set.
import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { check, database, proved, send, startApp } from '../check-kit.mjs';

const folder = import.meta.dirname;
const db = database(folder);
const run = `${process.pid}-${Date.now()}`;
const account = `acct-${run}`;
const one = async (sql, values) => (await db.query(sql, values)).rows[0];
const balance = async () => (await one('SELECT balance FROM accounts WHERE id = $1', [account])).balance;
const payouts = async (id) => (await one('SELECT count(*)::int AS n FROM payouts WHERE payout_id = $1', [id])).n;
const keyRow = (id) =>
  one("SELECT state, status FROM idempotency_keys WHERE key = $1 AND caller = $2 AND endpoint = 'CALL payout'", [
    id,
    account,
  ]);
/** The script, as a shell runs it: `npm run payout -- <id> <account> <amount>`. */
const script = async (id, amount) => {
  const { stdout } = await promisify(execFile)(process.execPath, ['dist/payout.js', id, account, String(amount)], {
    cwd: folder,
  }).catch((error) => error); // exit code 1 when it did not pay; its line says why
  return JSON.parse(stdout.trim().split('\n').pop());
};
// Both instances tick every 2 s; no colours in their logs.
const instance = { env: { REPORT_EVERY_SECONDS: '2', NO_COLOR: '1' } };

await db.query('INSERT INTO accounts (id, balance) VALUES ($1, 1000)', [account]);
await check(
  folder,
  async (app) => {
    const pay = async (id, amount) => (await send(`${app.url}/payouts/${id}`, { body: { account, amount } })).json;

    const first = await pay(`p1-${run}`, 100);
    proved(first.kind === 'executed' && first.value.amount === 100, 'a payout by the route: executed', first);
    proved(
      (await payouts(`p1-${run}`)) === 1 &&
        (await balance()) === 900 &&
        (await keyRow(`p1-${run}`))?.state === 'completed',
      'its payout row, its debit and its key committed together',
    );
    const again = await pay(`p1-${run}`, 100);
    proved(
      again.kind === 'replayed' && JSON.stringify(again.value) === JSON.stringify(first.value),
      'the same payout again: replayed, with the recorded value',
      again,
    );
    proved(
      (await payouts(`p1-${run}`)) === 1 && (await balance()) === 900,
      'and the function did not run: one row, one debit',
    );
    const fromScript = await script(`p1-${run}`, 100);
    proved(
      fromScript.kind === 'replayed' && JSON.stringify(fromScript.value) === JSON.stringify(first.value),
      'the script asked for the same payout: replayed, the same value',
      fromScript,
    );
    const byScript = await script(`p2-${run}`, 50);
    const thenRoute = await pay(`p2-${run}`, 50);
    proved(
      byScript.kind === 'executed' && thenRoute.kind === 'replayed' && thenRoute.value.id === byScript.value.id,
      'a payout by the script first: executed there, replayed by the route',
      [byScript, thenRoute],
    );
    proved((await balance()) === 850, 'one debit for it');

    const other = await pay(`p1-${run}`, 200);
    proved(
      other.kind === 'mismatch' && (await balance()) === 850,
      'the payout id with another amount: mismatch, not run',
      other,
    );

    const failed = await pay(`p3-${run}`, -5);
    proved(
      failed.kind === 'failed' && (await payouts(`p3-${run}`)) === 0 && (await balance()) === 850,
      'a function that throws (amount -5 breaks a CHECK after its debit): failed, the debit undone',
      failed,
    );
    proved((await keyRow(`p3-${run}`)) === undefined, 'and its key free');
    const retried = await pay(`p3-${run}`, 30);
    proved(
      retried.kind === 'executed' && (await balance()) === 820,
      'so the payout id runs when called again',
      retried,
    );

    const refused = await pay(`p4-${run}`, 5000);
    proved(
      refused.kind === 'failure-recorded' && (await payouts(`p4-${run}`)) === 0 && (await balance()) === 820,
      'a refusal (recordFailure): failure-recorded, its debit undone',
      refused,
    );
    proved((await keyRow(`p4-${run}`))?.status === 1, 'and the failure recorded with the key (result code 1)');
    await db.query('UPDATE accounts SET balance = balance + 10000 WHERE id = $1', [account]);
    const refusedAgain = await pay(`p4-${run}`, 5000);
    proved(
      refusedAgain.kind === 'failed-before' && (await payouts(`p4-${run}`)) === 0,
      'called again (the account topped up): failed-before, not run',
      refusedAgain,
    );

    const kinds = (await Promise.all(Array.from({ length: 10 }, () => pay(`p5-${run}`, 10)))).map((r) => r.kind);
    proved(
      kinds.filter((kind) => kind === 'executed').length === 1 &&
        kinds.every((kind) => ['executed', 'held', 'replayed'].includes(kind)),
      'ten calls at once: one executed, the others held or replayed',
      kinds,
    );
    proved((await payouts(`p5-${run}`)) === 1 && (await balance()) === 10810, 'one payout, one debit');

    // The hourly report: this instance and a second one tick every 2 s.
    const second = await startApp(folder, instance);
    try {
      const outcomes = () => {
        const slots = new Map();
        for (const output of [app.output, second.output])
          for (const [, slot, kind] of output.matchAll(/the report of (\S+): ([a-z-]+)/g))
            slots.set(slot, [...(slots.get(slot) ?? []), kind]);
        return [...slots].filter(([, kinds]) => kinds.length >= 2);
      };
      const deadline = Date.now() + 10_000;
      while (outcomes().length < 2 && Date.now() < deadline) await sleep(200);
      const both = outcomes();
      proved(both.length >= 2, 'the two instances ticked in the same slots', both);
      proved(
        both.every(([, kinds]) => kinds.filter((kind) => kind === 'executed').length === 1),
        'each slot both ticked in: executed on one instance, held or replayed on the other',
        both,
      );
      const rows = await Promise.all(
        both.map(async ([slot]) => (await one('SELECT count(*)::int AS n FROM reports WHERE slot = $1', [slot])).n),
      );
      proved(
        rows.every((n) => n === 1),
        'one report row per slot',
        rows,
      );
    } catch (error) {
      throw new Error(`${error.message}\nthe second instance's output:\n${second.output}`);
    } finally {
      await second.stop();
    }
  },
  instance,
);
await db.end();
