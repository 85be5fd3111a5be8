import { char, integer, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/**
 * The demo's `payments` table as Drizzle ORM sees it (the TypeORM entity is `Payment`), for the
 * apps that write payments with Drizzle on a node-postgres pool: the bench's Drizzle servers and
 * the Drizzle host's test app.
 */
export const payments = pgTable('payments', {
  id: uuid('id').primaryKey().defaultRandom(),
  caller: text('caller').notNull(),
  amount: integer('amount').notNull(),
  currency: char('currency', { length: 3 }).notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});
