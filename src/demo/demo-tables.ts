import type { MigrationInterface, QueryRunner } from 'typeorm';
import { CreateLedgerEntries1795996800003 } from './payments/create-ledger-entries.migration.js';
import { CreatePayments1795996800001 } from './payments/create-payments.migration.js';
import { CreateRefunds1795996800002 } from './refunds/create-refunds.migration.js';

/** The demo's own tables, in order, after the key table's migration (plain or partitioned). */
export const DEMO_TABLES: ReadonlyArray<new () => MigrationInterface> = [
  CreatePayments1795996800001,
  CreateRefunds1795996800002,
  CreateLedgerEntries1795996800003,
];

/** What running a migration needs of a connection: one SQL text at a time (a node-postgres `Pool`). */
export interface Queryable {
  query(sql: string): Promise<unknown>;
}

/**
 * Runs `migrations` (each safe to re-run: `IF NOT EXISTS` throughout) on `queryable`, with no
 * TypeORM: the migration classes only send SQL through the QueryRunner they are given.
 */
export async function migrateWithout(
  queryable: Queryable,
  migrations: ReadonlyArray<new () => MigrationInterface>,
): Promise<void> {
  const runner = { query: (sql: string) => queryable.query(sql) } as unknown as QueryRunner;
  for (const Migration of migrations) await new Migration().up(runner);
}
