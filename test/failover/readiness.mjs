// Waits on a cluster of the failover suite until it is in the state a step needs.
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

/** Resolves once `url`'s server accepts writes (it is a primary). */
export function untilWritable(url, ms = 60_000) {
  return until(url, 'SELECT NOT pg_is_in_recovery() AS ready', 'never accepted writes', ms);
}

/** Resolves once the primary at `url` has a synchronous standby streaming. */
export function untilSynchronous(url, ms = 60_000) {
  const sql = `SELECT count(*) > 0 AS ready FROM pg_stat_replication WHERE sync_state = 'sync'`;
  return until(url, sql, 'has no synchronous standby', ms);
}

/** Asks `url`'s server `sql` on a new connection every 100 ms until its `ready` is true. */
async function until(url, sql, failure, ms) {
  const deadline = Date.now() + ms;
  for (;;) {
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      const { rows } = await client.query(sql);
      if (rows[0].ready) return;
    } catch {
    } finally {
      await client.end().catch(() => undefined);
    }
    if (Date.now() > deadline) throw new Error(`${url} ${failure}`);
    await sleep(100);
  }
}
