import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The receivers' own tables: a payment per Stripe payment_intent.succeeded, a row per GitHub delivery. */
export class CreateWebhookTables1796601600000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE payments (
      id           uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
      stripe_event text        NOT NULL,
      customer     text,
      amount       integer     NOT NULL,
      currency     char(3)     NOT NULL,
      created_at   timestamptz NOT NULL DEFAULT now()
    )`);
    await queryRunner.query(`CREATE TABLE github_events (
      id          uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
      delivery    uuid        NOT NULL,
      name        text        NOT NULL,
      action      text,
      received_at timestamptz NOT NULL DEFAULT now()
    )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE github_events');
    await queryRunner.query('DROP TABLE payments');
  }
}
