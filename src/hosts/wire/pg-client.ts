import type { StatementResult } from '../database-host.js';

/** What the module uses of a node-postgres `Client`: its public API only. */
export interface PgClient {
  query(sql: string): Promise<StatementResult | StatementResult[]>;
  escapeLiteral(value: string): string;
  /** Ends the connection; with a query in flight, destroys its socket at once (that query fails). */
  end(): Promise<void>;
}

export function isPgClient(client: unknown): client is PgClient {
  const candidate = client as Partial<PgClient> | undefined;
  return (
    typeof candidate?.query === 'function' &&
    typeof candidate.escapeLiteral === 'function' &&
    typeof candidate.end === 'function'
  );
}

/**
 * Ends `client`'s connection so that no later request can use it: its statement in flight fails
 * at once, and its pool drops it when it is given back (node-postgres's pool never hands out a
 * client that is ending).
 */
export function destroyConnection(client: PgClient | undefined): void {
  client?.end().catch(() => undefined);
}
