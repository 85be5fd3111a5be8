import type { MigrationInterface, QueryRunner } from 'typeorm';
import { DROP_IDEMPOTENCY_KEYS } from './idempotency-keys.schema.js';
import { CREATE_PARTITIONED_IDEMPOTENCY_KEYS } from './idempotency-keys-partitioned.schema.js';

/**
 * Creates `idempotency_keys` partitioned by expiry (opt-in), instead of
 * `CreateIdempotencyKeys1795996800000`: list one of the two. The module creates the partitions
 * and its sweeper drops expired ones whole. The same DDL ships as plain SQL in
 * `migrations/1795996800000-create-partitioned-idempotency-keys.sql`.
 */
export class CreatePartitionedIdempotencyKeys1795996800000 implements MigrationInterface {
  name = 'CreatePartitionedIdempotencyKeys1795996800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of CREATE_PARTITIONED_IDEMPOTENCY_KEYS) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const statement of DROP_IDEMPOTENCY_KEYS) await queryRunner.query(statement);
  }
}
