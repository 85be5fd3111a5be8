import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The ledger entry a payment writes beside it on the Prisma host (`DEMO_TX=prisma`): a second model in the key's transaction. */
export class CreateLedgerEntries1795996800003 implements MigrationInterface {
  name = 'CreateLedgerEntries1795996800003';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE IF NOT EXISTS ledger_entries (
      id         uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
      payment_id uuid        NOT NULL REFERENCES payments (id) ON DELETE CASCADE,
      amount     integer     NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
    await queryRunner.query(`CREATE INDEX IF NOT EXISTS ledger_entries_payment_idx ON ledger_entries (payment_id)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE IF EXISTS ledger_entries`);
  }
}
