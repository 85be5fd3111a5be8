/** A connection carrying a transaction, as a host ends it and gives it back. */
export interface EndableConnection {
  /** Ends the transaction whole (every savepoint with it); throws when that failed, or when a COMMIT rolled back. */
  end(how: 'commit' | 'rollback'): Promise<void>;
  /** Whether the connection is still inside the transaction. */
  readonly inTransaction: boolean;
  /** Gives the connection back to its pool, or destroys it (`destroy`): the pool then drops it. */
  giveBack(destroy: boolean): Promise<void> | void;
}

/**
 * Ends the connection's transaction whole and gives the connection back. A commit that fails is
 * rolled back, and its error thrown. A connection still inside the transaction afterwards (its
 * ROLLBACK failed too) is destroyed instead, so that no later request runs inside a
 * half-finished transaction.
 */
export async function endAndGiveBack(connection: EndableConnection, how: 'commit' | 'rollback'): Promise<void> {
  let failure: unknown;
  if (connection.inTransaction) {
    try {
      await connection.end(how);
    } catch (error) {
      failure = error;
      if (how === 'commit') await connection.end('rollback').catch(() => undefined);
    }
  }
  await connection.giveBack(connection.inTransaction);
  if (failure !== undefined && how === 'commit') throw failure;
}
