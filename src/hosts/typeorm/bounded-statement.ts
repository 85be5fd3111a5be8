import type { DataSource } from 'typeorm';
import { destroyConnection, type PgClient } from '../pg/pg-client.js';
import { type StatementSender, StatementsVanishedError } from '../pg/statement-sender.js';
import { givenUpAfter } from '../pg/time-bound.js';
import type { Bound, Statement, StatementResult } from '../transaction-host.js';

/**
 * Runs `statement` alone on a connection of `dataSource` (see `TransactionHost.runAlone`). A
 * connection that comes only after the statement was given up goes back to the pool unused; one
 * the statement was sent over is destroyed.
 */
export async function runBounded(
  dataSource: DataSource | Promise<DataSource>,
  sender: StatementSender,
  what: string,
  statement: Statement,
  bound: Bound,
): Promise<StatementResult> {
  let givenUp = false;
  let client: PgClient | undefined;
  let release: (() => Promise<void>) | undefined;
  const work = (async () => {
    const queryRunner = (await dataSource).createQueryRunner('master');
    release = () => queryRunner.release();
    const connected = (await queryRunner.connect()) as PgClient;
    if (givenUp) throw new Error(`${what} was given up before it was sent`);
    client = connected;
    // A statement that vanished did not run, and the sender now sends it whole.
    const [result] = await sender.send(connected, [statement]).catch((error: unknown) => {
      if (error instanceof StatementsVanishedError) return sender.send(connected, [statement]);
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
