import type { HandlerScope } from '../../hosts/database-host.js';
import type { ToolTransactions } from './key-transactions.js';

/** A Prisma client as the adapter uses it (a `PrismaClient`, extended or not). */
export interface PrismaTransactionClient {
  $queryRawUnsafe(query: string, ...values: any[]): PromiseLike<any>;
  $transaction(...args: any[]): PromiseLike<any>;
}

/**
 * What the adapter uses of `IdempotentPrisma` (`nestjs-pg-idempotency/prisma`), said here by its
 * shape, so that one subpath entry does not import another: the client (the key's inside an
 * `@Idempotent()` request, the app's elsewhere), whether the key's is active, and the scope its
 * key transactions run in.
 */
export interface KeyAwarePrisma<Client> {
  readonly client: Client;
  readonly isActive: boolean;
  useHandlerScope(scope: HandlerScope): void;
}

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
export function prismaTransactions<Client extends PrismaTransactionClient>(
  prisma: KeyAwarePrisma<Client>,
): ToolTransactions<Client, PrismaTransactionOptions> {
  return {
    keyTx: () => (prisma.isActive ? prisma.client : undefined),
    fallback: () => prisma.client,
    begin: (options, run) => Promise.resolve(prisma.client.$transaction(run, options)),
    nested: (tx, options, run) => Promise.resolve(tx.$transaction(run, options)),
    isolationOf: (options) => options?.isolationLevel,
  };
}
