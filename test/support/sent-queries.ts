import pg from 'pg';

/**
 * The SQL texts this process's pg clients send while `run` runs: one per round trip (node-pg
 * sends one query per call, no pipelining).
 */
export async function sentQueries(run: () => Promise<unknown>): Promise<string[]> {
  const { sent, stop } = recordQueries();
  try {
    await run();
  } finally {
    stop();
  }
  return sent;
}

/**
 * Watches the SQL texts this process's pg clients send from now on, until `stop()`: `count(text)`
 * tells how many of them contained `text` (a key, whose lookups carry it as a literal).
 */
export function watchQueries(): { count(text: string): number; stop(): void } {
  const { sent, stop } = recordQueries();
  return { count: (text) => sent.filter((query) => query.includes(text)).length, stop };
}

/** Records every SQL text this process's pg clients send, until `stop()`. */
function recordQueries(): { sent: string[]; stop(): void } {
  const original = pg.Client.prototype.query;
  const sent: string[] = [];
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [query] = args as [string | { text: string }];
    sent.push(typeof query === 'string' ? query : query.text);
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  return {
    sent,
    stop: () => {
      pg.Client.prototype.query = original;
    },
  };
}
