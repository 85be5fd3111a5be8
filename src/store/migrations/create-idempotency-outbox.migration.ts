import type { MigrationInterface, QueryRunner } from 'typeorm';
import { CREATE_IDEMPOTENCY_OUTBOX, DROP_IDEMPOTENCY_OUTBOX } from './idempotency-outbox.schema.js';

/**
 * Creates the `idempotency_outbox` table, where keyed work stages the messages it publishes
 * (docs/outbox.md). Add it to your DataSource's `migrations` list when you use the outbox:
 *
 * ```ts
 * migrations: [CreateIdempotencyKeys1795996800000, CreateIdempotencyOutbox1796515200000, ...yourMigrations]
 * ```
 * The same DDL ships as plain SQL in `migrations/1796515200000-create-idempotency-outbox.sql`.
 */
export class CreateIdempotencyOutbox1796515200000 implements MigrationInterface {
  name = 'CreateIdempotencyOutbox1796515200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of CREATE_IDEMPOTENCY_OUTBOX) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const statement of DROP_IDEMPOTENCY_OUTBOX) await queryRunner.query(statement);
  }
}
