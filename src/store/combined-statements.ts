import { Logger } from '@nestjs/common';
import type { DataSource, QueryRunner } from 'typeorm';
import { connectionOf } from './time-bound.js';

/**
 * A statement the store runs on every request, prepared once per connection (SQL `PREPARE`) so
 * that PostgreSQL plans it once, then run with `EXECUTE`.
 */
export interface PreparedStatement {
  /** Unique per statement text: bump the suffix when the text changes. */
  name: string;
  /** Parameter types, in order (`PREPARE name (types) AS text`). */
  types: readonly string[];
  text: string;
}

/** A prepared statement and the values of its parameters. */
export type Statement = readonly [statement: PreparedStatement, params: unknown[]];

/**
 * Transactional mode sends its statements together with the transaction's own `START
 * TRANSACTION` and `COMMIT`, so that a request costs no round trip more than the same handler in
 * a plain transaction: "START TRANSACTION; EXECUTE lock(…); EXECUTE key_row(…)" and "EXECUTE
 * insert_outcome(…); COMMIT" each travel as one simple-protocol query (the first time a
 * connection runs them, after their `PREPARE`s, in round trips of their own). The transaction
 * is READ COMMITTED whatever the server's default, so that each statement of such a message runs
 * with its own snapshot: the key's row is read after its lock was taken, never from a snapshot
 * older than the lock. The simple protocol takes no bind parameters, so values are inlined as literals:
 * strings through the driver's `escapeLiteral`, bytes as `decode('<hex>', 'hex')`, integers as
 * digits; nothing else is accepted. When one statement fails, PostgreSQL skips the rest of the
 * message: a failed statement before `COMMIT` leaves the transaction aborted, never committed.
 *
 * The QueryRunner is kept in step (`isTransactionActive`, its transaction depth) and TypeORM's
 * transaction events are broadcast as `startTransaction()`/`commitTransaction()` would, so that
 * nested `manager.transaction()` calls use savepoints and subscribers still hear the commit.
 * Returns the rows of each statement, in order.
 */
export async function startTransactionWith(
  queryRunner: QueryRunner,
  statements: readonly Statement[],
  /** Statements the transaction may run later, prepared now, outside it (see `prepare`). */
  later: readonly PreparedStatement[] = [],
  /** A statement without parameters sent last in the same message (`SAVEPOINT name`). */
  then?: string,
): Promise<any[][]> {
  const client = connectedClient(queryRunner) ?? (await connectClient(queryRunner));
  const whole = sentWhole(queryRunner);
  let sql = 'START TRANSACTION ISOLATION LEVEL READ COMMITTED';
  for (const [statement, params] of statements) sql += `;\n${execute(statement, params, client, whole)}`;
  if (then) sql += `;\n${then}`;
  const missing = notYetPrepared(client, statements.map(([statement]) => statement).concat(later), whole);
  if (missing.length > 0) await prepare(client, missing);
  let pending = broadcast(queryRunner, 'BeforeTransactionStart');
  if (pending) await pending;
  setTransactionState(queryRunner, true, 1);
  const results = await client.query(sql);
  pending = broadcast(queryRunner, 'AfterTransactionStart');
  if (pending) await pending;
  return results.slice(1, 1 + statements.length).map((result) => result.rows);
}

/**
 * Runs `statement` and `COMMIT` in one round trip, after `first` when given (a statement without
 * parameters: `ROLLBACK TO SAVEPOINT name`); returns the statement's row count. After such a
 * rollback the app's writes are gone: subscribers hear a rollback (as TypeORM announces a nested
 * one), never a commit of writes that no longer exist.
 */
export async function commitWith(queryRunner: QueryRunner, statement: PreparedStatement, params: unknown[], first?: string): Promise<number> {
  const client = connectedClient(queryRunner) ?? (await connectClient(queryRunner));
  const whole = sentWhole(queryRunner);
  const sql = `${first ? `${first};\n` : ''}${execute(statement, params, client, whole)};\nCOMMIT`;
  const missing = notYetPrepared(client, [statement], whole);
  if (missing.length > 0) await prepare(client, missing);
  let pending = broadcast(queryRunner, first ? 'BeforeTransactionRollback' : 'BeforeTransactionCommit');
  if (pending) await pending;
  const results = await client.query(sql);
  setTransactionState(queryRunner, false, 0);
  // Committed: a subscriber failing now cannot undo that, so it must not turn the recorded
  // outcome into a failure (the client would be told nothing was kept).
  pending = broadcast(queryRunner, first ? 'AfterTransactionRollback' : 'AfterTransactionCommit');
  if (pending) await pending.catch(afterEndFailed);
  return results[results.length - 2].rowCount ?? 0;
}

/**
 * Ends the query runner's transaction with a plain `COMMIT` or `ROLLBACK`, whatever its depth:
 * TypeORM's own `commitTransaction()`/`rollbackTransaction()` end only the innermost level, and a
 * handler can leave one open (a nested `manager.transaction()` still running when a sibling
 * promise failed, a `startTransaction()` never ended), which would send the connection back to
 * the pool inside the key's transaction. Subscribers hear it as TypeORM would announce it; one
 * failing after a `COMMIT` is logged (the commit stands).
 */
export async function endWholeTransaction(queryRunner: QueryRunner, end: 'COMMIT' | 'ROLLBACK'): Promise<void> {
  const [before, after] = end === 'COMMIT' ? (['BeforeTransactionCommit', 'AfterTransactionCommit'] as const) : (['BeforeTransactionRollback', 'AfterTransactionRollback'] as const);
  const pending = broadcast(queryRunner, before);
  if (pending) await pending;
  const client = connectedClient(queryRunner) ?? (await connectClient(queryRunner));
  await client.query(end);
  setTransactionState(queryRunner, false, 0);
  const done = broadcast(queryRunner, after);
  if (done) await done.catch(afterEndFailed);
}

/** Logs a subscriber's failure once the key's transaction had ended (what it did stands). */
function afterEndFailed(error: unknown): void {
  logger.error(`a TypeORM subscriber failed after the key's transaction ended (what it did stands): ${(error as Error)?.message ?? String(error)}`);
}

/**
 * Runs a prepared `statement` on the query runner's connection (inside its transaction, if any),
 * followed in the same message by `then` when given (a statement without parameters).
 */
export async function runPrepared(queryRunner: QueryRunner, statement: PreparedStatement, params: unknown[], then?: string): Promise<PgResult> {
  const client = connectedClient(queryRunner) ?? (await connectClient(queryRunner));
  const whole = sentWhole(queryRunner);
  const sql = then ? `${execute(statement, params, client, whole)};\n${then}` : execute(statement, params, client, whole);
  const missing = notYetPrepared(client, [statement], whole);
  if (missing.length > 0) await prepare(client, missing);
  const results = await client.query(sql);
  return results[results.length - (then ? 2 : 1)];
}

/**
 * Runs a prepared `statement` alone (autocommit) on `client`: a connection of `dataSource`, or of
 * a pool beside it to the same database (lease mode's own, `LeaseConnections`).
 */
export async function runPreparedOnClient(client: PgClient, dataSource: DataSource, statement: PreparedStatement, params: unknown[]): Promise<PgResult> {
  const statements = statementClient(client);
  const whole = unprepared.has(dataSource);
  const missing = notYetPrepared(statements, [statement], whole);
  if (missing.length > 0) await prepare(statements, missing);
  const results = await statements.query(execute(statement, params, statements, whole));
  return results[results.length - 1];
}

export interface PgResult {
  rows: any[];
  rowCount: number | null;
}

export interface PgClient {
  query(sql: string): Promise<PgResult[] | PgResult>;
  escapeLiteral(value: string): string;
}

const logger = new Logger('Idempotency');

/** The statements already prepared on each connection. */
const prepared = new WeakMap<PgClient, Set<string>>();

/** DataSources whose statements are sent whole instead of prepared (`preparedStatements: false`). */
const unprepared = new WeakSet<DataSource>();

/**
 * Whether the store's statements are `PREPARE`d once per connection on `dataSource` (the
 * default) or sent whole every time: connections behind a pooler in transaction mode (PgBouncer)
 * change server sessions between transactions, where a prepared statement does not follow.
 */
export function usePreparedStatements(dataSource: DataSource, enabled: boolean): void {
  if (enabled) unprepared.delete(dataSource);
  else unprepared.add(dataSource);
}

interface StatementClient {
  query(sql: string): Promise<PgResult[]>;
  escapeLiteral(value: string): string;
  raw: PgClient;
}

/** Whether the query runner's DataSource sends the store's statements whole, never prepared. */
function sentWhole(queryRunner: QueryRunner): boolean {
  return unprepared.has(queryRunner.connection);
}

/** The statement client of each connection. */
const statementClients = new WeakMap<PgClient, StatementClient>();

/** The statement client of the query runner's connection, when it holds one already. */
function connectedClient(queryRunner: QueryRunner): StatementClient | undefined {
  const connection = connectionOf<PgClient>(queryRunner);
  return connection ? statementClient(connection) : undefined;
}

/** Takes a connection from the pool for the query runner (TypeORM's `connect()`). */
async function connectClient(queryRunner: QueryRunner): Promise<StatementClient> {
  return statementClient((await queryRunner.connect()) as PgClient);
}

function statementClient(client: PgClient): StatementClient {
  let statements = statementClients.get(client);
  if (statements) return statements;
  if (typeof client?.escapeLiteral !== 'function') {
    throw new Error('nestjs-pg-idempotency: the DataSource must use the PostgreSQL driver (pg)');
  }
  statements = {
    raw: client,
    escapeLiteral: (value) => client.escapeLiteral(value),
    query: (sql) =>
      client.query(sql).then(
        (result) => (Array.isArray(result) ? result : [result]),
        (error: unknown) => {
          // A prepared statement outlives the transaction it was prepared in, so the record
          // stays. Only a connection reset behind the pool's back makes it wrong: its EXECUTE
          // fails (26000), and the next request on that connection prepares again.
          if ((error as { code?: string }).code === '26000') prepared.delete(client);
          throw error;
        },
      ),
  };
  statementClients.set(client, statements);
  return statements;
}

/**
 * Broadcasts a transaction event to the DataSource's subscribers, as TypeORM's own
 * `startTransaction()`/`commitTransaction()` do; with none (the common case) nothing is awaited.
 */
function broadcast(queryRunner: QueryRunner, event: TransactionEvent): Promise<void> | undefined {
  return queryRunner.connection.subscribers.length > 0 ? queryRunner.broadcaster.broadcast(event) : undefined;
}

type TransactionEvent = `${'Before' | 'After'}Transaction${'Start' | 'Commit' | 'Rollback'}`;

/** Those of `statements` not prepared on this connection yet (none when sent whole). */
function notYetPrepared(client: StatementClient, statements: readonly PreparedStatement[], whole: boolean): readonly PreparedStatement[] {
  if (whole) return [];
  const names = prepared.get(client.raw);
  return names ? statements.filter((statement) => !names.has(statement.name)) : statements;
}

/**
 * `PREPARE`s `statements` on this connection, each in its own round trip (once per connection
 * and statement: callers pass only the `notYetPrepared` ones), recorded only once PostgreSQL took it,
 * so a message that fails, or is never sent, cannot leave a statement marked prepared that is
 * not. Outside a transaction, one found prepared already (42P05: a PREPARE whose answer was lost)
 * counts as prepared; inside one, that error would abort it, which is why the store prepares
 * what its key transaction runs before starting it.
 */
async function prepare(client: StatementClient, statements: readonly PreparedStatement[]): Promise<void> {
  let names = prepared.get(client.raw);
  if (!names) prepared.set(client.raw, (names = new Set()));
  for (const statement of statements) {
    try {
      await client.query(`PREPARE ${statement.name} (${statement.types.join(', ')}) AS ${statement.text}`);
    } catch (error) {
      if ((error as { code?: string }).code !== '42P05') throw error;
    }
    names.add(statement.name);
  }
}

function execute(statement: PreparedStatement, params: unknown[], client: StatementClient, whole: boolean): string {
  if (whole) return statement.text.replace(/\$(\d+)/g, (_placeholder, index: string) => literal(params[Number(index) - 1], client));
  return `EXECUTE ${statement.name} (${params.map((param) => literal(param, client)).join(', ')})`;
}

function setTransactionState(queryRunner: QueryRunner, active: boolean, depth: number): void {
  const state = queryRunner as unknown as { isTransactionActive: boolean; transactionDepth: number };
  state.isTransactionActive = active;
  state.transactionDepth = depth;
}

/** Strings with neither a quote nor a backslash: quoted as they are (escapeLiteral's own result). */
const PLAIN = /^[^'\\]*$/;

function literal(value: unknown, client: { escapeLiteral(value: string): string }): string {
  if (value === null || value === undefined) return 'NULL';
  if (Buffer.isBuffer(value)) return `decode('${value.toString('hex')}', 'hex')`;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  if (typeof value === 'string') return PLAIN.test(value) ? `'${value}'` : client.escapeLiteral(value);
  throw new TypeError(`nestjs-pg-idempotency: cannot inline a ${typeof value} into SQL`);
}
