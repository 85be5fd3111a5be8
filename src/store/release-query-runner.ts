import type { QueryRunner } from 'typeorm';
import { endWholeTransaction } from './combined-statements.js';

/**
 * Rolls back whatever transaction `queryRunner` has open, at every depth, and returns its
 * connection to the pool. A connection whose ROLLBACK fails is destroyed instead, so no later
 * request can run inside a half-finished transaction.
 */
export async function rollbackAndRelease(queryRunner: QueryRunner): Promise<void> {
  if (queryRunner.isTransactionActive) {
    try {
      await endWholeTransaction(queryRunner, 'ROLLBACK');
    } catch (error) {
      return releaseBroken(queryRunner, error);
    }
  }
  await queryRunner.release();
}

/** Returns the connection of `queryRunner` to its pool as broken: the pool destroys it. */
export async function releaseBroken(queryRunner: QueryRunner, error: unknown): Promise<void> {
  const runner = queryRunner as QueryRunner & { releasePostgresConnection?(error: unknown): Promise<void> };
  if (runner.releasePostgresConnection) return runner.releasePostgresConnection(error);
  await queryRunner.release();
}
