import type { MigrationInterface, QueryRunner } from 'typeorm';

export class CreatePayments1796601600000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE payments (
      id         uuid    PRIMARY KEY DEFAULT gen_random_uuid(),
      caller     text    NOT NULL,
      amount     integer NOT NULL CHECK (amount > 0),
      currency   char(3) NOT NULL,
      card_last4 char(4) NOT NULL
    )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE payments');
  }
}
