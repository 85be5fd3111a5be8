import { DataSource } from 'typeorm';
import { commitWith, runPrepared, startTransactionWith } from '../../src/store/combined-statements.js';
import { rollbackAndRelease } from '../../src/store/release-query-runner.js';
import { INSERT_OUTCOME, KEY_ROW, LOCK_KEY } from '../../src/store/store.sql.js';
import { databaseUrl } from '../support/apps.js';

/**
 * The key transaction's statements on one pooled connection (a pool of one), the way the store
 * sends them: what a failed or unsent message leaves behind for the next request on the same
 * connection, and the isolation the key's transaction runs at.
 */
describe('statements sent with START TRANSACTION and COMMIT', () => {
  let dataSource: DataSource;
  beforeEach(async () => {
    dataSource = new DataSource({ type: 'postgres', url: databaseUrl(), extra: { max: 1 } });
    await dataSource.initialize();
  });
  afterEach(() => dataSource.destroy());

  const lookup = (key: string): unknown[] => [key, 'combined-statements', 'POST /x', Buffer.alloc(32)];

  /** Starts a key transaction with the lock and the lookup on the pool's one connection; rolls back. */
  async function reserveOnce(lockId: unknown, key = 'k'): Promise<unknown[][]> {
    const queryRunner = dataSource.createQueryRunner('master');
    try {
      return await startTransactionWith(queryRunner, [
        [LOCK_KEY, [lockId]],
        [KEY_ROW, lookup(key)],
      ]);
    } finally {
      await rollbackAndRelease(queryRunner);
    }
  }

  it('a message that is never sent (a value that cannot be inlined) leaves no statement marked prepared', async () => {
    await expect(reserveOnce(1.5)).rejects.toThrow('cannot inline a number');
    await expect(reserveOnce('42')).resolves.toEqual([[{ locked: true }], []]);
  });

  it('a message PostgreSQL refuses leaves the connection usable for the next request', async () => {
    await expect(reserveOnce('99999999999999999999')).rejects.toThrow(/out of range/);
    await expect(reserveOnce('43')).resolves.toEqual([[{ locked: true }], []]);
    const queryRunner = dataSource.createQueryRunner('master');
    try {
      expect((await runPrepared(queryRunner, KEY_ROW, lookup('k2'))).rows).toEqual([]);
    } finally {
      await queryRunner.release();
    }
  });

  it('a statement found prepared already (its PREPARE answered but the answer lost) is taken as prepared, before the transaction', async () => {
    const queryRunner = dataSource.createQueryRunner('master');
    try {
      await queryRunner.query(`PREPARE ${INSERT_OUTCOME.name} (${INSERT_OUTCOME.types.join(', ')}) AS ${INSERT_OUTCOME.text}`);
      await startTransactionWith(queryRunner, [[LOCK_KEY, ['45']]], [INSERT_OUTCOME]);
      const key = `combined-${Date.now()}`;
      const params = [key, 'combined-statements', 'POST /x', Buffer.alloc(32), 201, '[]', Buffer.from('{}'), 60_000];
      expect(await commitWith(queryRunner, INSERT_OUTCOME, params)).toBe(1);
      expect(await queryRunner.query('SELECT status FROM idempotency_keys WHERE key = $1', [key])).toEqual([{ status: 201 }]);
      await queryRunner.query('DELETE FROM idempotency_keys WHERE key = $1', [key]);
    } finally {
      await queryRunner.release();
    }
  });

  it('the key transaction is READ COMMITTED even where the default is stricter, so the lookup follows the lock', async () => {
    const queryRunner = dataSource.createQueryRunner('master');
    try {
      await queryRunner.query(`SET default_transaction_isolation = 'serializable'`);
      await startTransactionWith(queryRunner, [[LOCK_KEY, ['44']]]);
      expect(await queryRunner.query('SHOW transaction_isolation')).toEqual([{ transaction_isolation: 'read committed' }]);
      await commitWith(queryRunner, KEY_ROW, lookup('k3'));
      expect(queryRunner.isTransactionActive).toBe(false);
    } finally {
      await queryRunner.query('RESET default_transaction_isolation');
      await queryRunner.release();
    }
  });
});
