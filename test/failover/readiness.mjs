// Waits on a cluster of the failover suite until it is in the state a step needs.
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

/** Resolves once `url`'s server accepts writes (it is a primary). */
export async function untilWritable(url, ms = 60_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      const { rows } = await client.query('SELECT pg_is_in_recovery() AS recovering');
      if (!rows[0].recovering) return;
    } catch {
    } finally {
      await client.end().catch(() => undefined);
    }
    if (Date.now() > deadline) throw new Error(`${url} never accepted writes`);
    await sleep(100);
  }
}

/** Resolves once the primary at `url` has a synchronous standby streaming. */
export async function untilSynchronous(url, ms = 60_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      const { rows } = await client.query(
        `SELECT count(*)::int AS n FROM pg_stat_replication WHERE sync_state = 'sync'`,
      );
      if (rows[0].n > 0) return;
    } catch {
    } finally {
      await client.end().catch(() => undefined);
    }
    if (Date.now() > deadline) throw new Error(`${url} has no synchronous standby`);
    await sleep(100);
  }
}
