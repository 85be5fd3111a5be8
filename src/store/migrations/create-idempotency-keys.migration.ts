import type { MigrationInterface, QueryRunner } from 'typeorm';
import { CREATE_IDEMPOTENCY_KEYS, DROP_IDEMPOTENCY_KEYS } from './idempotency-keys.schema.js';

/**
 * Creates the `idempotency_keys` table and the index the sweeper uses. Add it to your
 * DataSource's `migrations` list next to your own:
 *
 * ```ts
 * migrations: [CreateIdempotencyKeys1795996800000, ...yourMigrations]
 * ```
 * The same DDL ships as plain SQL in `migrations/1795996800000-create-idempotency-keys.sql`.
 */
export class CreateIdempotencyKeys1795996800000 implements MigrationInterface {
  name = 'CreateIdempotencyKeys1795996800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of CREATE_IDEMPOTENCY_KEYS) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const statement of DROP_IDEMPOTENCY_KEYS) await queryRunner.query(statement);
  }
}
