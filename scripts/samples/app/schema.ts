// A sample app's Drizzle schema: `import * as schema from './schema.js'`.
import { integer, pgTable, text, uuid } from 'drizzle-orm/pg-core';

export const payments = pgTable('payments', {
  id: uuid('id').primaryKey().defaultRandom(),
  caller: text('caller'),
  amount: integer('amount').notNull(),
  currency: text('currency').notNull(),
});

export const ledgerEntries = pgTable('ledger_entries', {
  id: uuid('id').primaryKey().defaultRandom(),
  paymentId: uuid('payment_id').notNull(),
  amount: integer('amount').notNull(),
});
