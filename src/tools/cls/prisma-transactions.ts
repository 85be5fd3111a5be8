import type { IdempotentPrisma } from '../prisma/idempotent-prisma.js';
import type { PrismaClientLike } from '../prisma/self-check.js';
import type { ToolTransactions } from './key-transactions.js';

/** The options of a Prisma interactive `$transaction()`. */
export interface PrismaTransactionOptions {
  maxWait?: number;
  timeout?: number;
  isolationLevel?: string;
}

/**
 * Prisma's transactions, as `TransactionalAdapterPrisma` starts them, on `IdempotentPrisma`'s
 * client: the key's client inside an `@Idempotent()` request (its `$transaction()` a savepoint of
 * the key's transaction), the app's elsewhere; a nested one is Prisma's own nested `$transaction()`.
 */
export function prismaTransactions<Client extends PrismaClientLike>(
  prisma: IdempotentPrisma<Client>,
): ToolTransactions<Client, PrismaTransactionOptions> {
  return {
    keyTx: () => (prisma.isActive ? prisma.client : undefined),
    fallback: () => prisma.client,
    begin: (options, run) => Promise.resolve(prisma.client.$transaction(run, options)),
    nested: (tx, options, run) => Promise.resolve(tx.$transaction(run, options)),
    isolationOf: (options) => options?.isolationLevel,
  };
}
