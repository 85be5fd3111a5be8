import type { MigrationInterface, QueryRunner } from 'typeorm';
import { ADD_TOMBSTONE_COLUMNS } from './idempotency-keys.schema.js';

/**
 * Adds to an `idempotency_keys` table created before tombstones (plain or partitioned) the two
 * columns they use and the index of the responses the sweeper drops. A table created by
 * `CreateIdempotencyKeys1795996800000` (or its partitioned twin) since has them, and this does
 * nothing there. Add it after that one:
 *
 * ```ts
 * migrations: [CreateIdempotencyKeys1795996800000, AddIdempotencyTombstones1796860800000, ...yourMigrations]
 * ```
 * The same DDL ships as plain SQL in `migrations/1796860800000-add-idempotency-tombstones.sql`.
 */
export class AddIdempotencyTombstones1796860800000 implements MigrationInterface {
  name = 'AddIdempotencyTombstones1796860800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of ADD_TOMBSTONE_COLUMNS) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX IF EXISTS idempotency_keys_response_expires_at_idx`);
    await queryRunner.query(
      `ALTER TABLE idempotency_keys DROP COLUMN IF EXISTS response_expires_at, DROP COLUMN IF EXISTS completed_at`,
    );
  }
}
