import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The demo's refunds, and the simulated provider's own ledger (another system's storage). */
export class CreateRefunds1795996800002 implements MigrationInterface {
  name = 'CreateRefunds1795996800002';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE IF NOT EXISTS refunds (
      id                 uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
      payment_id         uuid        NOT NULL REFERENCES payments (id),
      amount             integer     NOT NULL CHECK (amount > 0),
      provider_refund_id text        NOT NULL UNIQUE,
      created_at         timestamptz NOT NULL DEFAULT now()
    )`);
    await queryRunner.query(`CREATE TABLE IF NOT EXISTS demo_provider_refunds (
      id              uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
      idempotency_key text        NOT NULL UNIQUE,
      payment_id      uuid        NOT NULL,
      amount          integer     NOT NULL,
      calls           integer     NOT NULL DEFAULT 1,
      created_at      timestamptz NOT NULL DEFAULT now()
    )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE IF EXISTS demo_provider_refunds`);
    await queryRunner.query(`DROP TABLE IF EXISTS refunds`);
  }
}
