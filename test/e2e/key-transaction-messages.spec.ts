import type { ModuleRef } from '@nestjs/core';
import { DataSource } from 'typeorm';
import type { Statement } from '../../src/hosts/database-host.js';
import { TypeOrmHost } from '../../src/hosts/typeorm/typeorm-host.js';
import { resolveModuleOptions } from '../../src/options/settings.js';
import { RECORD_OUTCOME } from '../../src/store/table/record.sql.js';
import { KEY_ROW, LOCK_KEY } from '../../src/store/table/reservation.sql.js';
import { databaseUrl } from '../support/apps.js';

/**
 * The key transaction's messages on one pooled connection (a pool of one), the way the TypeORM
 * adapter sends them in each of its two ways of reaching TypeORM's transaction: what a failed or
 * unsent message leaves behind for the next request on the same connection, and the isolation
 * the key's transaction runs at.
 */
describe.each(['auto', 'public-api'] as const)(
  'the key transaction through TypeORM (typeormAccess: %s)',
  (typeormAccess) => {
    let dataSource: DataSource;
    let host: TypeOrmHost;
    beforeEach(async () => {
      dataSource = new DataSource({ type: 'postgres', url: databaseUrl(), extra: { max: 1 } });
      await dataSource.initialize();
      host = new TypeOrmHost(resolveModuleOptions({ dataSource, typeormAccess }), undefined as unknown as ModuleRef);
      await host.onModuleInit();
    });
    afterEach(async () => {
      await host.onApplicationShutdown();
      await dataSource.destroy();
    });

    it('takes the access it is given: combined after its startup check, or the public API', () => {
      expect(host.access).toBe(typeormAccess === 'auto' ? 'combined' : 'public-api');
    });

    const lookup = (key: string): Statement => [
      KEY_ROW,
      [key, 'key-transaction-messages', 'POST /x', Buffer.alloc(32)],
    ];

    /** Opens a key transaction with the lock and the lookup on the pool's one connection; rolls back. */
    async function reserveOnce(lockId: unknown, key = 'k'): Promise<unknown[][]> {
      const { transaction, results } = await host.begin([[LOCK_KEY, [lockId]], lookup(key)], []);
      await transaction.end('rollback');
      return results.map((result) => result.rows);
    }

    it('a message that is never sent (a value that cannot be inlined) leaves no statement marked prepared', async () => {
      await expect(reserveOnce(1.5)).rejects.toThrow('cannot inline a number');
      await expect(reserveOnce('42')).resolves.toEqual([[{ locked: true }], []]);
    });

    it('a message PostgreSQL refuses leaves the connection usable for the next request', async () => {
      await expect(reserveOnce('99999999999999999999')).rejects.toThrow(/out of range/);
      await expect(reserveOnce('43')).resolves.toEqual([[{ locked: true }], []]);
      expect((await host.runAlone('a lookup', lookup('k2'), { timeoutMs: 5_000 })).rows).toEqual([]);
    });

    it('a statement found prepared already (a PREPARE whose answer was lost): begin() rolls the attempt back, starts again with the statements whole from then on, and the transaction records its outcome', async () => {
      await dataSource.query(
        `PREPARE ${RECORD_OUTCOME.name} (${RECORD_OUTCOME.types.join(', ')}) AS ${RECORD_OUTCOME.text}`,
      );
      // The pool has one connection: the second attempt gets it only if the first gave it back.
      const { transaction, results } = await host.begin([[LOCK_KEY, ['45']]], [RECORD_OUTCOME]);
      expect(results.map((result) => result.rows)).toEqual([[{ locked: true }]]);
      const key = `messages-${typeormAccess}-${Date.now()}`;
      const params = [
        key,
        'key-transaction-messages',
        'POST /x',
        Buffer.alloc(32),
        201,
        '[]',
        Buffer.from('{}'),
        60_000,
        null,
      ];
      expect(await transaction.commitWith([[RECORD_OUTCOME, params]], false)).toBe(1);
      expect(await dataSource.query('SELECT status FROM idempotency_keys WHERE key = $1', [key])).toEqual([
        { status: 201 },
      ]);
      // Whole from then on: a statement the connection never saw is not prepared on it.
      await expect(reserveOnce('47')).resolves.toEqual([[{ locked: true }], []]);
      const prepared = (await dataSource.query('SELECT name FROM pg_prepared_statements')) as { name: string }[];
      expect(prepared.map(({ name }) => name)).not.toContain(KEY_ROW.name);
      await dataSource.query('DELETE FROM idempotency_keys WHERE key = $1', [key]);
    });

    it('the key transaction is READ COMMITTED even where the default is stricter, so the lookup follows the lock', async () => {
      // The pool's one connection: the session default applies to the key's transaction on it.
      await dataSource.query(`SET default_transaction_isolation = 'serializable'`);
      try {
        const { transaction } = await host.begin([[LOCK_KEY, ['44']]], []);
        const manager = transaction.handle as DataSource['manager'];
        expect(await manager.query('SHOW transaction_isolation')).toEqual([
          { transaction_isolation: 'read committed' },
        ]);
        expect(await transaction.commitWith([lookup('k3')], false)).toBe(0);
        expect(manager.queryRunner?.isTransactionActive).toBe(false);
      } finally {
        await dataSource.query('RESET default_transaction_isolation');
      }
    });

    it('a row in the way that is not takeable fails the recording, and the transaction commits nothing', async () => {
      const key = `messages-live-${typeormAccess}-${Date.now()}`;
      await dataSource.query(
        `INSERT INTO idempotency_keys (key, caller, endpoint, fingerprint, state, status, response_body, expires_at)
       VALUES ($1, 'key-transaction-messages', 'POST /x', '\\x00', 'completed', 201, '\\x7b7d', now() + interval '1 hour')`,
        [key],
      );
      const { transaction } = await host.begin([[LOCK_KEY, ['46']]], [RECORD_OUTCOME]);
      const manager = transaction.handle as DataSource['manager'];
      await manager.query(
        `INSERT INTO idempotency_keys (key, caller, endpoint, fingerprint, state, expires_at) VALUES ($1, 'x', 'y', '\\x00', 'completed', now())`,
        [`${key}-write`],
      );
      const params = [
        key,
        'key-transaction-messages',
        'POST /x',
        Buffer.alloc(32),
        201,
        '[]',
        Buffer.from('{}'),
        60_000,
        null,
      ];
      await expect(transaction.commitWith([[RECORD_OUTCOME, params]], false)).rejects.toThrow(/division by zero/);
      expect(
        await dataSource.query('SELECT key, fingerprint FROM idempotency_keys WHERE key LIKE $1 ORDER BY key', [
          `${key}%`,
        ]),
      ).toEqual([{ key, fingerprint: Buffer.from([0]) }]);
      await dataSource.query('DELETE FROM idempotency_keys WHERE key = $1', [key]);
    });
  },
);
