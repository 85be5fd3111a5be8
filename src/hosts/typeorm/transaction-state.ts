import type { QueryRunner } from 'typeorm';

/*
 * The one piece of TypeORM's private state the module touches: a QueryRunner's transaction
 * flags (`isTransactionActive`, and the protected `transactionDepth`). Setting them lets the key's
 * transaction start and commit in the same message as the key's statements (no round trip of
 * their own), while nested `manager.transaction()` calls in the handler still see a transaction
 * and use savepoints. `selfCheck.ts` checks, on a real QueryRunner at startup, that TypeORM keeps
 * its transaction state in these two fields; otherwise the adapter uses TypeORM's public
 * `startTransaction()` and `commitTransaction()` instead.
 */

interface TransactionFlags {
  isTransactionActive: boolean;
  transactionDepth: number;
}

export function setTransactionState(queryRunner: QueryRunner, active: boolean, depth: number): void {
  const flags = queryRunner as unknown as TransactionFlags;
  flags.isTransactionActive = active;
  flags.transactionDepth = depth;
}

/** The flags as TypeORM's own methods left them, or `undefined` when they are not plain fields. */
export function transactionState(queryRunner: QueryRunner): TransactionFlags | undefined {
  const flags = queryRunner as unknown as Partial<TransactionFlags>;
  for (const name of ['isTransactionActive', 'transactionDepth'] as const) {
    const field = Object.getOwnPropertyDescriptor(queryRunner, name);
    if (!field || !('value' in field) || field.writable !== true) return undefined;
  }
  if (typeof flags.isTransactionActive !== 'boolean' || typeof flags.transactionDepth !== 'number') return undefined;
  return { isTransactionActive: flags.isTransactionActive, transactionDepth: flags.transactionDepth };
}
