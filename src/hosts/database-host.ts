import type { DatabaseFailure } from './database-failures.js';

/**
 * The port: everything the pipeline needs from the app's database host (TypeORM, a pool of
 * node-postgres, an ORM's driver), and everything a host may throw. One adapter per host
 * implements it, in a folder of its own under `hosts/`, on this file and the wire library
 * (`hosts/wire/`) alone; only an adapter may touch a dependency's private state, and one that
 * does checks it at startup and falls back to the dependency's public API (or refuses to start).
 *
 * What an adapter throws: every method's failure that comes from the database or its driver is
 * one of the port's `DatabaseFailure` classes (`database-failures.ts`: unavailable, a lost race,
 * refused), translated by the adapter, with the driver's error as its `cause`; anything else (a
 * statement given up after its bound, a refusal of the module's own) is thrown as it is.
 * Statements of the module's that vanished from a server session (a pooler in transaction mode)
 * are the adapter's to retry: `begin()` starts the work again, whole, and the stages never see it.
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
   * Runs `statements`, in order, and commits, in one round trip where the host allows; with
   * `rollbackHandler`, rolls the handler's writes back to its savepoint first (what ran before
   * the savepoint stays). Returns the last statement's row count. On failure the transaction is
   * rolled back (the connection destroyed if that fails too) and the error thrown.
   */
  commitWith(statements: readonly Statement[], rollbackHandler: boolean): Promise<number>;
  /**
   * Runs `statement` in the transaction before the handler runs, and sets the handler's savepoint
   * again after it, so that rolling the handler's writes back keeps what it did.
   */
  runBeforeHandler(statement: Statement): Promise<StatementResult>;
  /**
   * Starts the handler (`start`), inside the scope of the app's own transaction tool pointed at
   * this transaction when one registered with `useHandlerScope()`, until `settled` resolves.
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

/**
 * A transaction tool of the app's that keeps its own "current transaction"
 * (`@nestjs-cls/transactional`), pointed at the key's transaction while a handler runs: `start()`
 * starts the handler (it returns what it returns) inside a scope where the tool's current
 * transaction is `handle`; the scope ends once `settled` resolves. `savepoint` is the handler's
 * savepoint, which the tool's first transaction may use as its own.
 */
export type HandlerScope = <T>(
  handle: unknown,
  start: () => T,
  settled: Promise<void>,
  savepoint: HandlerSavepoint,
) => T;

/**
 * The savepoint the key's transaction sets before the handler runs. A tool that would set a
 * savepoint of its own for a transaction it starts (so that a failure undoes that transaction's
 * writes alone) may take this one instead while nothing ran since it was set: rolling back to it
 * undoes exactly the same, and no SAVEPOINT is sent.
 */
export interface HandlerSavepoint {
  /**
   * The handler's savepoint, for one transaction of the tool's that starts now: `undefined` when a
   * statement ran since it was set, or another transaction holds it (set a savepoint of your own).
   */
  take(): TakenSavepoint | undefined;
}

/** The handler's savepoint, taken by one transaction of a tool's. */
export interface TakenSavepoint {
  /** The transaction succeeded: its writes stay, and the savepoint is free for nobody again. */
  release(): void;
  /** The transaction failed: its writes are rolled back to the savepoint, which is free again. */
  rollback(): Promise<void>;
}

/**
 * The DI token of the app's database host (one name for the port and its token), shared by both
 * builds of the package (`Symbol.for`): a transaction tool's adapter or an `IdempotencyTransaction`
 * of the other build (CommonJS beside the app's ESM, or the other way round) resolves the host of
 * the module the app imported. The suffix is the port's shape: a release that changes it changes it.
 */
export const DatabaseHost = Symbol.for('nestjs-pg-idempotency.database-host.v2');

export interface DatabaseHost<Handle = unknown> {
  /**
   * The handle the handler's tools reach outside a key transaction (TypeORM: the DataSource's
   * manager), or `undefined` where the host has none of its own (the app writes through its own
   * pool or client).
   */
  readonly defaultHandle: Handle | undefined;
  /**
   * Opens the key's transaction at READ COMMITTED (each statement reads with a snapshot of its
   * own, so a row read after the key's lock sees a holder that committed meanwhile), runs
   * `statements` in it, then sets the handler's savepoint: one round trip where the host allows.
   * `later`: statements the transaction runs later (prepared now, outside it, when the host
   * prepares statements). On failure nothing stays open, and the error is thrown. Statements
   * that vanished from the server session are retried here, once, whole.
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
  /**
   * What an error the handler's code threw (through the tool it writes with) says of the
   * database: one of the port's failures, or `undefined` when it is not the database's.
   */
  failureOf(error: unknown): DatabaseFailure | undefined;
  /**
   * Registers how to reach the driver's error inside the errors of a tool the handler writes with,
   * where the tool wraps it in its own (Prisma's `PrismaClientKnownRequestError`): `failureOf()`
   * reads what `unwrap` returns, when it returns anything.
   */
  readFailuresThrough(unwrap: (error: unknown) => unknown): void;
  /**
   * Registers the scope of a transaction tool of the app's, for the key transactions opened on
   * `database` (the connection object the tool was given: a TypeORM DataSource). A host that no
   * such tool can run on refuses, with an error that says why.
   */
  useHandlerScope(database: object, scope: HandlerScope): void;
}
