import type { Bound, Statement, StatementResult } from '../database-host.js';
import { destroyConnection, type PgClient } from './pg-client.js';
import { translated } from './postgres-failures.js';
import { onceMoreIfVanished, type StatementSender } from './statement-sender.js';
import { givenUpAfter, StatementTimeoutError } from './time-bound.js';

/** A connection taken from a pool, and how to give it back. */
export interface PooledConnection {
  client: PgClient;
  release(): Promise<void> | void;
}

/**
 * Runs `statements` in one message, one implicit transaction, on a connection `connect()` takes
 * (see `DatabaseHost.runAlone` and `runTogether`). A
 * connection that comes only after the statement was given up goes back to the pool unused; one
 * the statement was sent over is destroyed. Statements that vanished (`StatementsVanishedError`)
 * did not run, and the sender now sends them whole: they run again. A failure of the database's is
 * thrown as the port's (`translated`).
 */
export async function runBounded(
  connect: () => Promise<PooledConnection>,
  sender: StatementSender,
  what: string,
  statements: readonly Statement[],
  bound: Bound,
): Promise<StatementResult[]> {
  let givenUp = false;
  let client: PgClient | undefined;
  let release: (() => Promise<void> | void) | undefined;
  const work = (async () => {
    const connection = await connect();
    release = () => connection.release();
    if (givenUp) throw new StatementTimeoutError(`${what} was given up before it was sent`);
    client = connection.client;
    return await onceMoreIfVanished(() => sender.send(connection.client, statements));
  })();
  try {
    return await givenUpAfter(what, bound, work, () => {
      givenUp = true;
      destroyConnection(client);
    });
  } catch (error) {
    throw translated(error);
  } finally {
    if (givenUp)
      void work.then(
        () => release?.(),
        () => release?.(),
      );
    else await release?.();
  }
}
