/**
 * The transaction port: everything the pipeline needs from the app's database host (TypeORM, a
 * transaction tool on top of it, a plain `pg` pool). One adapter per host implements it; only an
 * adapter may touch a dependency's private state, and one that does checks it at startup and
 * falls back to the dependency's public API.
 */

/** A statement of the module's, with `$n` placeholders: run prepared (by `name`) or whole. */
export interface SqlStatement {
  /** Unique per statement text: bump the suffix when the text changes. */
  readonly name: string;
  /** Parameter types, in order (`PREPARE name (types) AS text`). */
  readonly types: readonly string[];
  readonly text: string;
  /** Sent whole every time, never prepared: a statement run seldom, whose plan costs nothing beside its work. */
  readonly whole?: boolean;
}

/** A statement and the values of its parameters. */
export type Statement = readonly [statement: SqlStatement, params: readonly unknown[]];

/** What PostgreSQL answered to one statement. */
export interface StatementResult {
  rows: any[];
  rowCount: number | null;
}

/**
 * The key's transaction, open on a connection of the app's own pool, at READ COMMITTED, with the
 * handler's savepoint set: the handler's writes go through `handle`, and exactly one of
 * `commitWith()` and `end()` ends it and gives its connection back. Until then the app cannot
 * end it nor give its connection back through `handle` (the adapter refuses, with an error that
 * says why).
 */
export interface KeyTransaction<Handle = unknown> {
  /** The handler's database handle (a TypeORM `EntityManager`), until the connection went back. */
  readonly handle: Handle | undefined;
  /**
   * Runs `statement` and commits, in one round trip where the host allows; with
   * `rollbackHandler`, rolls the handler's writes back to its savepoint first (what ran before
   * the savepoint stays). Returns the statement's row count. On failure the transaction is
   * rolled back (the connection destroyed if that fails too) and the error thrown.
   */
  commitWith(statement: Statement, rollbackHandler: boolean): Promise<number>;
  /**
   * Runs `statement` in the transaction before the handler runs, and sets the handler's savepoint
   * again after it, so that rolling the handler's writes back keeps what it did.
   */
  runBeforeHandler(statement: Statement): Promise<StatementResult>;
  /**
   * Starts the handler (`start`), inside the scope of the app's own transaction tool pointed at
   * this transaction when the app uses one (`handler-scope.ts`), until `settled` resolves.
   */
  enterHandler<T>(start: () => T, settled: Promise<void>): T;
  /**
   * Ends the transaction whole, at whatever depth the handler left it (a nested transaction
   * still open): `commit` keeps the handler's writes, `rollback` undoes everything. A
   * connection whose rollback fails is destroyed, never given back to the pool mid-transaction.
   */
  end(how: 'commit' | 'rollback'): Promise<void>;
}

/** A key transaction just opened, and what its opening statements returned. */
export interface OpenedTransaction<Handle = unknown> {
  transaction: KeyTransaction<Handle>;
  results: StatementResult[];
}

/** How long a statement sent alone may take, and what else gives it up. */
export interface Bound {
  timeoutMs: number;
  /** Aborting gives the statement up at once (the app shuts down). */
  signal?: AbortSignal;
}

/** The DI token of the app's transaction host (one name for the port and its token). */
export const TransactionHost = Symbol('nestjs-pg-idempotency:transaction-host');

export interface TransactionHost<Handle = unknown> {
  /**
   * Opens the key's transaction at READ COMMITTED (each statement reads with a snapshot of its
   * own, so a row read after the key's lock sees a holder that committed meanwhile), runs
   * `statements` in it, then sets the handler's savepoint: one round trip where the host allows.
   * `later`: statements the transaction runs later (prepared now, outside it, when the host
   * prepares statements). On failure nothing stays open, and the error is thrown.
   */
  begin(statements: readonly Statement[], later: readonly SqlStatement[]): Promise<OpenedTransaction<Handle>>;
  /**
   * Runs `statement` alone (its own implicit transaction) on a connection of the app's pool. A
   * statement that gets no connection, or no answer, within the bound is given up (it rejects,
   * with `what` in its message), and the connection it was sent over is destroyed: a connection
   * that died without a word would otherwise never answer.
   */
  runAlone(what: string, statement: Statement, bound: Bound): Promise<StatementResult>;
  /**
   * `runAlone` for several statements sent in one message: one implicit transaction (a lock one
   * takes is held until the last has run), in which each statement reads with a snapshot of its
   * own; a failing statement skips the rest and rolls back what ran.
   */
  runTogether(what: string, statements: readonly Statement[], bound: Bound): Promise<StatementResult[]>;
  /**
   * `runAlone` on a small pool of the module's own to the same database, which never queues
   * behind the app's requests (lease renewals and recordings).
   */
  runOnOwnPool(what: string, statement: Statement, bound: Bound): Promise<StatementResult>;
}
