import { char, integer, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/** The `payments` table of db/tables.sql, as Drizzle sees it. */
export const payments = pgTable('payments', {
  id: uuid('id').primaryKey().defaultRandom(),
  caller: text('caller').notNull(),
  amount: integer('amount').notNull(),
  currency: char('currency', { length: 3 }).notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});
