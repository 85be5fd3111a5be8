import pg from 'pg';

/**
 * The SQL texts this process's pg clients send while `run` runs: one per round trip (node-pg
 * sends one query per call, no pipelining).
 */
export async function sentQueries(run: () => Promise<unknown>): Promise<string[]> {
  const original = pg.Client.prototype.query;
  const sent: string[] = [];
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [query] = args as [string | { text: string }];
    sent.push(typeof query === 'string' ? query : query.text);
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    await run();
  } finally {
    pg.Client.prototype.query = original;
  }
  return sent;
}
