import { Logger } from '@nestjs/common';
import type { DataSource, QueryRunner } from 'typeorm';
import { IdempotencyConfigurationError } from '../../idempotency.errors.js';
import { packageVersion } from '../package-version.js';
import { isPgClient } from '../wire/pg-client.js';
import { setTransactionState, transactionState } from './transaction-state.js';

/**
 * How the adapter reaches the key's transaction: `combined` sends `START TRANSACTION` and
 * `COMMIT` in the same messages as the key's statements, keeping the QueryRunner's transaction
 * state in step (`transaction-state.ts`); `public-api` starts and commits through TypeORM's
 * `startTransaction()` and `commitTransaction()`: two more round trips per request, the same
 * guarantees.
 */
export type TypeOrmAccess = 'combined' | 'public-api';

const logger = new Logger('Idempotency');

/**
 * Checks, on a real QueryRunner of `dataSource`, what the adapter relies on: that the DataSource
 * runs on node-postgres (else it cannot serve the module at all), and, unless `wanted` is
 * `public-api`, that TypeORM keeps a QueryRunner's transaction state in the fields the combined
 * access sets: after its own `startTransaction()` and `rollbackTransaction()`, and after they are
 * set. When that state is not as expected (a TypeORM release changed it), it logs one warning
 * naming the TypeORM version and answers `public-api`.
 */
export async function checkTypeOrmAccess(
  dataSource: DataSource,
  wanted: 'auto' | 'public-api',
): Promise<TypeOrmAccess> {
  const queryRunner = dataSource.createQueryRunner('master');
  try {
    const client: unknown = await queryRunner.connect();
    if (!isPgClient(client)) {
      throw new IdempotencyConfigurationError(
        'the DataSource must use the PostgreSQL driver (pg): its connections are not node-postgres clients',
      );
    }
    if (wanted === 'public-api') return 'public-api';
    const unexpected = await unexpectedTransactionState(queryRunner);
    if (!unexpected) return 'combined';
    logger.warn(
      `TypeORM ${packageVersion('typeorm') ?? 'of an unknown version'}: ${unexpected}, so the key's transaction is started and committed through TypeORM's public API ` +
        `(two more round trips per request, the same guarantees). Set typeormAccess: 'public-api' to choose this without the warning.`,
    );
    return 'public-api';
  } finally {
    if (queryRunner.isTransactionActive) await queryRunner.rollbackTransaction().catch(() => undefined);
    await queryRunner.release();
  }
}

/** What is not as the combined access expects, or `undefined` when everything is. */
async function unexpectedTransactionState(queryRunner: QueryRunner): Promise<string | undefined> {
  const expect = (active: boolean, depth: number) => {
    const state = transactionState(queryRunner);
    return state?.isTransactionActive === active && state.transactionDepth === depth;
  };
  if (!expect(false, 0))
    return "a new QueryRunner's transaction state is not in the fields isTransactionActive and transactionDepth";
  await queryRunner.startTransaction();
  if (!expect(true, 1))
    return "startTransaction() does not keep the QueryRunner's transaction state in isTransactionActive and transactionDepth";
  await queryRunner.rollbackTransaction();
  if (!expect(false, 0))
    return "rollbackTransaction() does not keep the QueryRunner's transaction state in isTransactionActive and transactionDepth";
  setTransactionState(queryRunner, true, 1);
  const kept = queryRunner.isTransactionActive;
  setTransactionState(queryRunner, false, 0);
  if (kept !== true || !expect(false, 0)) return "the QueryRunner's transaction state cannot be set";
  if (typeof queryRunner.broadcaster?.broadcast !== 'function')
    return 'the QueryRunner has no broadcaster to announce transaction events';
  return undefined;
}
