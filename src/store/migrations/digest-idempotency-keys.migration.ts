import type { MigrationInterface, QueryRunner } from 'typeorm';
import { DIGEST_IDEMPOTENCY_KEYS } from './digest-idempotency-keys.schema.js';
import { IdempotencyConfigurationError } from '../../idempotency.errors.js';

/**
 * Rewrites the keys of `idempotency_keys` as digests, for switching a table that holds rows to
 * `storage: { keys: 'digest' }`. Run it while no instance of the app serves idempotent routes,
 * then start them with the option set (docs/storage.md says why, and how). It cannot be
 * reverted: `down()` refuses. The same statement ships as plain SQL in
 * `migrations/1796169600000-digest-idempotency-keys.sql`.
 */
export class DigestIdempotencyKeys1796169600000 implements MigrationInterface {
  name = 'DigestIdempotencyKeys1796169600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of DIGEST_IDEMPOTENCY_KEYS) await queryRunner.query(statement);
  }

  async down(): Promise<void> {
    throw new IdempotencyConfigurationError(
      'DigestIdempotencyKeys1796169600000 cannot be reverted: a digest cannot be turned back into its key',
    );
  }
}
