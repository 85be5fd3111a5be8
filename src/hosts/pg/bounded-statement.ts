import type { Bound, Statement, StatementResult } from '../transaction-host.js';
import { destroyConnection, type PgClient } from './pg-client.js';
import { type StatementSender, StatementsVanishedError } from './statement-sender.js';
import { givenUpAfter } from './time-bound.js';

/** A connection taken from a pool, and how to give it back. */
export interface PooledConnection {
  client: PgClient;
  release(): Promise<void> | void;
}

/**
 * Runs `statement` alone on a connection `connect()` takes (see `TransactionHost.runAlone`). A
 * connection that comes only after the statement was given up goes back to the pool unused; one
 * the statement was sent over is destroyed. A statement that vanished (`StatementsVanishedError`)
 * did not run, and the sender now sends it whole: it runs again.
 */
export async function runBounded(
  connect: () => Promise<PooledConnection>,
  sender: StatementSender,
  what: string,
  statement: Statement,
  bound: Bound,
): Promise<StatementResult> {
  let givenUp = false;
  let client: PgClient | undefined;
  let release: (() => Promise<void> | void) | undefined;
  const work = (async () => {
    const connection = await connect();
    release = () => connection.release();
    if (givenUp) throw new Error(`${what} was given up before it was sent`);
    client = connection.client;
    const [result] = await sender.send(connection.client, [statement]).catch((error: unknown) => {
      if (error instanceof StatementsVanishedError) return sender.send(connection.client, [statement]);
      throw error;
    });
    return result;
  })();
  try {
    return await givenUpAfter(what, bound, work, () => {
      givenUp = true;
      destroyConnection(client);
    });
  } finally {
    if (givenUp) void work.then(() => release?.(), () => release?.());
    else await release?.();
  }
}
