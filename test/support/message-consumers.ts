import { sql } from './database.js';
import type { DemoProcess } from './processes.js';

/** The consumer app the message suites start as processes (`test/e2e/message-consumer.app.mjs`). */
export const CONSUMER_APP = 'test/e2e/message-consumer.app.mjs';

/** The message events a consumer process counted, by type. */
export async function stats(consumer: DemoProcess): Promise<Record<string, number>> {
  return (await fetch(`${consumer.url}/stats`)).json() as Promise<Record<string, number>>;
}

/** The amounts of the caller's payments, in order: one row per effect. */
export async function amounts(caller: string): Promise<number[]> {
  return (await sql<{ amount: number }>('SELECT amount FROM payments WHERE caller = $1 ORDER BY amount', [caller])).map((row) => row.amount);
}

/** Whether the consumer process has died (it SIGKILLs itself in the kill scenarios). */
export function gone(consumer: DemoProcess): boolean {
  return consumer.child.exitCode !== null || consumer.child.signalCode !== null;
}
