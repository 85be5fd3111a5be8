import type { MigrationInterface, QueryRunner } from 'typeorm';

export class CreatePayments1795996800001 implements MigrationInterface {
  name = 'CreatePayments1795996800001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE IF NOT EXISTS payments (
      id         uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
      caller     text        NOT NULL,
      amount     integer     NOT NULL CHECK (amount > 0),
      currency   char(3)     NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
    await queryRunner.query(`CREATE INDEX IF NOT EXISTS payments_caller_idx ON payments (caller, created_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE IF EXISTS payments`);
  }
}
