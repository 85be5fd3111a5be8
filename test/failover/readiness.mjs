// Waits on the failover suite's servers until they are in the state a step needs: each wait asks
// the server (or pg_auto_failover's monitor) again every 100 ms, up to a bound.
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

/** Resolves once `condition()` resolves true; rejects, naming `what`, once `ms` have passed. */
export async function until(condition, what, ms = 60_000) {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${ms / 1000} s`);
    await sleep(100);
  }
}

/** Resolves once `url`'s server accepts writes (it is a primary). */
export function untilWritable(url, ms) {
  return until(() => answersReady(url, 'SELECT NOT pg_is_in_recovery() AS ready'), `${url} accepting writes`, ms);
}

/** Resolves once the primary at `url` has a synchronous standby streaming. */
export function untilSynchronous(url, ms) {
  const sql = `SELECT count(*) > 0 AS ready FROM pg_stat_replication WHERE sync_state = 'sync'`;
  return until(() => answersReady(url, sql), `a synchronous standby streaming from ${url}`, ms);
}

/** Whether `url`'s server answers `sql` with a true `ready`, on a new connection; false when it cannot. */
async function answersReady(url, sql) {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    const { rows } = await client.query(sql);
    return rows[0].ready === true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}
