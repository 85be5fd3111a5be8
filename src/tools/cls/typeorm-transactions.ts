import type { DataSource, EntityManager } from 'typeorm';
import { executionContext } from '../../hosts/execution-context.js';
import type { ToolTransactions } from './key-transactions.js';

export interface TypeOrmTransactionOptions {
  isolationLevel?: 'READ UNCOMMITTED' | 'READ COMMITTED' | 'REPEATABLE READ' | 'SERIALIZABLE';
}

/** The EntityManager of the key's transaction the calling code runs in, while that is open. */
export function keyManager(): EntityManager | undefined {
  return executionContext.getStore()?.handle as EntityManager | undefined;
}

/** TypeORM's transactions, as `TransactionalAdapterTypeOrm` starts them. */
export function typeOrmTransactions(
  dataSource: DataSource,
): ToolTransactions<EntityManager, TypeOrmTransactionOptions> {
  return {
    keyTx: keyManager,
    fallback: () => dataSource.manager,
    begin: (options, run) => dataSource.transaction(options?.isolationLevel as never, run),
    nested: (tx, options, run) => tx.transaction(options?.isolationLevel as never, run),
    isolationOf: (options) => options?.isolationLevel,
  };
}
