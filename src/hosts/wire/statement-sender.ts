import { Logger } from '@nestjs/common';
import type { SqlStatement, Statement, StatementResult } from '../database-host.js';
import type { PgClient } from './pg-client.js';
import { executeText, prepareText, wholeText } from './sql-text.js';
import { IdempotencyError } from '../../idempotency.errors.js';

/** A part of a message: a statement of the module's, or an SQL command without parameters. */
export type MessagePart = Statement | string;

/**
 * A statement prepared on a connection was missing when it was run (SQLSTATE 26000), or one it
 * never prepared was there (42P05): server sessions change under the connection, as behind a
 * pooler in transaction mode. The failed message's transaction, if it opened one, is aborted and
 * nothing of it can commit; the sender now sends its statements whole, so that the same work,
 * started again, succeeds.
 */
export class StatementsVanishedError extends IdempotencyError {
  readonly code = '26000';

  constructor(
    override readonly cause: unknown,
    why = VANISHED,
  ) {
    super(`${(cause as Error)?.message ?? String(cause)} (${why})`);
  }
}

const VANISHED =
  'prepared statements vanished between transactions, as behind a pooler in transaction mode (PgBouncer); ' +
  'the module sends its statements whole from now on; preparedStatements: false does so from the start';

const FOUND_ALREADY =
  'a statement of the module was found prepared already on a connection that had not prepared it: a server session shared ' +
  'between connections, as behind a pooler in transaction mode (PgBouncer), or a PREPARE whose answer was lost; ' +
  'the module sends its statements whole from now on; preparedStatements: false does so from the start';

const logger = new Logger('Idempotency');

/**
 * Sends the module's statements over node-postgres connections, several in one simple-protocol
 * message (one round trip): when one fails, PostgreSQL skips the rest of the message, so a failed
 * statement before a `COMMIT` leaves the transaction aborted, never committed. The simple
 * protocol takes no bind parameters, so values are inlined as literals (`sql-text.ts`).
 *
 * While `preparing`, statements are `PREPARE`d once per connection and run with `EXECUTE`
 * (planned once); those a message needs and the connection lacks are prepared together, in one
 * message of their own (one implicit transaction, so one server session even behind a pooler).
 * A prepared statement found missing (26000), or found there before it was prepared (42P05), means
 * server sessions change under the connections (a pooler in transaction mode): the sender then
 * sends every statement whole, for good, logs that once, and the failed message throws
 * `StatementsVanishedError` (start the work again). A transaction's statements are prepared
 * together, in one message, before it starts: that message prepares them all, or meets one there
 * already (42P05) and switches the sender to whole statements. So a transaction whose first
 * message ran finds its later statements on its server session, or sends them whole.
 */
export class StatementSender {
  /** The statements prepared on each connection: recorded only once PostgreSQL took them. */
  private readonly prepared = new WeakMap<PgClient, Set<string>>();

  constructor(private preparing: boolean) {}

  /** Whether statements are still prepared (not sent whole). */
  get prepares(): boolean {
    return this.preparing;
  }

  /**
   * Sends `parts` as one message on `client` and returns each part's result. `later`: statements
   * the same transaction runs later, prepared now along with these (outside the transaction).
   */
  async send(
    client: PgClient,
    parts: readonly MessagePart[],
    later: readonly SqlStatement[] = [],
  ): Promise<StatementResult[]> {
    const preparing = this.preparing;
    // The text is built first: a value that cannot be inlined fails before anything is sent.
    const sql = parts
      .map((part) => (typeof part === 'string' ? part : this.textOf(part, client, preparing)))
      .join(';\n');
    if (preparing) {
      const statements = parts
        .filter((part): part is Statement => typeof part !== 'string')
        .map(([statement]) => statement);
      const preparation = this.prepareAhead(client, statements.concat(later));
      if (preparation) await preparation;
    }
    try {
      const results = await client.query(sql);
      return Array.isArray(results) ? results : [results];
    } catch (error) {
      if ((error as { code?: string }).code !== '26000' || !preparing) throw error;
      throw this.vanished(client, error, VANISHED);
    }
  }

  /**
   * Prepares, while preparing, those of `statements` not yet prepared on `client`: before a
   * transaction that runs them is started by someone else. `undefined` when there is nothing to
   * prepare (no promise on the path every request takes).
   */
  prepareAhead(client: PgClient, statements: readonly SqlStatement[]): Promise<void> | undefined {
    if (!this.preparing) return undefined;
    const names = this.prepared.get(client);
    let missing: SqlStatement[] | undefined;
    for (const statement of statements) {
      if (!statement.whole && !names?.has(statement.name) && !missing?.includes(statement))
        (missing ??= []).push(statement);
    }
    return missing && this.prepare(client, missing);
  }

  private textOf([statement, params]: Statement, client: PgClient, preparing: boolean): string {
    return preparing && !statement.whole
      ? executeText(statement, params, client)
      : wholeText(statement, params, client);
  }

  /**
   * `PREPARE`s `statements` on `client` in one message, and records them once PostgreSQL took
   * them. A statement found prepared already (42P05) on a connection that never prepared it means
   * its server session is shared, as behind a pooler in transaction mode: the sender then sends
   * its statements whole, as when one vanishes, and throws `StatementsVanishedError`.
   */
  private async prepare(client: PgClient, statements: readonly SqlStatement[]): Promise<void> {
    try {
      await client.query(statements.map(prepareText).join(';\n'));
    } catch (error) {
      if ((error as { code?: string }).code !== '42P05') throw error;
      throw this.vanished(client, error, FOUND_ALREADY);
    }
    let names = this.prepared.get(client);
    if (!names) this.prepared.set(client, (names = new Set()));
    for (const statement of statements) names.add(statement.name);
  }

  /** Sends statements whole from now on (saying `why` once); the error to throw for the failed message. */
  private vanished(client: PgClient, cause: unknown, why: string): StatementsVanishedError {
    this.prepared.delete(client);
    if (this.preparing) {
      this.preparing = false;
      logger.warn(why);
    }
    return new StatementsVanishedError(cause, why);
  }
}

/**
 * `work`, started once more when its statements vanished (`StatementsVanishedError`): the failed
 * attempt's transaction was rolled back, and the sender now sends its statements whole.
 */
export async function onceMoreIfVanished<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof StatementsVanishedError) return work();
    throw error;
  }
}
