import type { SqlStatement, Statement, StatementResult } from '../transaction-host.js';
import type { PgClient } from './pg-client.js';
import { executeText, prepareText, wholeText } from './sql-text.js';

/** A part of a message: a statement of the module's, or an SQL command without parameters. */
export type MessagePart = Statement | string;

/**
 * Sends the module's statements over node-postgres connections, several in one simple-protocol
 * message (one round trip): when one fails, PostgreSQL skips the rest of the message, so a failed
 * statement before a `COMMIT` leaves the transaction aborted, never committed. The simple
 * protocol takes no bind parameters, so values are inlined as literals (`sql-text.ts`).
 *
 * With `preparing`, each statement is `PREPARE`d once per connection, in a round trip of its own
 * the first time, and run with `EXECUTE` (planned once); without, it is sent whole every time
 * (behind a pooler in transaction mode, whose server sessions change between transactions).
 */
export class StatementSender {
  /** The statements prepared on each connection: recorded only once PostgreSQL took them. */
  private readonly prepared = new WeakMap<PgClient, Set<string>>();

  constructor(readonly preparing: boolean) {}

  /**
   * Sends `parts` as one message on `client` and returns each part's result. `later`: statements
   * the same transaction runs later, prepared now along with these (outside the transaction).
   */
  async send(client: PgClient, parts: readonly MessagePart[], later: readonly SqlStatement[] = []): Promise<StatementResult[]> {
    // The text is built first: a value that cannot be inlined fails before anything is sent.
    const sql = parts.map((part) => (typeof part === 'string' ? part : this.textOf(part, client))).join(';\n');
    const statements = parts.filter((part): part is Statement => typeof part !== 'string').map(([statement]) => statement);
    await this.prepareAhead(client, statements.concat(later));
    try {
      const results = await client.query(sql);
      return Array.isArray(results) ? results : [results];
    } catch (error) {
      // A prepared statement outlives the transaction it was prepared in, so the record stays.
      // Only a session reset behind the pool's back makes it wrong: its EXECUTE fails (26000),
      // and the next message on this connection prepares again.
      if ((error as { code?: string }).code === '26000') this.prepared.delete(client);
      throw error;
    }
  }

  /**
   * Prepares, when preparing, those of `statements` not yet prepared on `client`: before a
   * transaction that runs them is started by someone else.
   */
  async prepareAhead(client: PgClient, statements: readonly SqlStatement[]): Promise<void> {
    if (!this.preparing) return;
    const missing = this.notYetPrepared(client, statements);
    if (missing.length > 0) await this.prepare(client, missing);
  }

  private textOf([statement, params]: Statement, client: PgClient): string {
    return this.preparing && !statement.whole ? executeText(statement, params, client) : wholeText(statement, params, client);
  }

  private notYetPrepared(client: PgClient, statements: readonly SqlStatement[]): SqlStatement[] {
    const names = this.prepared.get(client);
    const missing: SqlStatement[] = [];
    for (const statement of statements) {
      if (!statement.whole && !names?.has(statement.name) && !missing.includes(statement)) missing.push(statement);
    }
    return missing;
  }

  /**
   * `PREPARE`s `statements` on `client`, each in its own round trip. Outside a transaction, one
   * found prepared already (42P05: a PREPARE whose answer was lost) counts as prepared; inside
   * one, that error would abort it, which is why a key transaction's statements are prepared
   * before it starts.
   */
  private async prepare(client: PgClient, statements: readonly SqlStatement[]): Promise<void> {
    let names = this.prepared.get(client);
    if (!names) this.prepared.set(client, (names = new Set()));
    for (const statement of statements) {
      try {
        await client.query(prepareText(statement));
      } catch (error) {
        if ((error as { code?: string }).code !== '42P05') throw error;
      }
      names.add(statement.name);
    }
  }
}
