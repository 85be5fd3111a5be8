import { readFileSync } from 'node:fs';
import { CREATE_IDEMPOTENCY_KEYS } from '../../store/migrations/idempotency-keys.schema.js';
import { CREATE_PARTITIONED_IDEMPOTENCY_KEYS } from '../../store/migrations/idempotency-keys-partitioned.schema.js';
import { CREATE_IDEMPOTENCY_OUTBOX } from '../../store/migrations/idempotency-outbox.schema.js';

/** What `nestjs-pg-idempotency migrate` applies. */
export interface MigrateRequest {
  /** The key table partitioned by expiry instead of the plain one (docs/partitioned-keys.md). */
  partitioned: boolean;
  /** The outbox's table too (docs/outbox.md). */
  outbox: boolean;
  /** SQL files of the app's own, applied after the module's tables, in the same transaction. */
  files: readonly string[];
}

/** Runs one SQL text (one or several statements) on the CLI's connection. */
export type RunSql = (text: string) => Promise<unknown>;

/**
 * Applies the module's tables (the same statements as the shipped migrations, each safe to re-run)
 * and then `files`, in one transaction: all of it, or nothing. Returns a line per thing applied.
 */
export async function migrate(run: RunSql, { partitioned, outbox, files }: MigrateRequest): Promise<string[]> {
  const steps: Array<[what: string, statements: readonly string[]]> = [
    [
      partitioned ? 'idempotency_keys (partitioned by expiry)' : 'idempotency_keys',
      partitioned ? CREATE_PARTITIONED_IDEMPOTENCY_KEYS : CREATE_IDEMPOTENCY_KEYS,
    ],
  ];
  if (outbox) steps.push(['idempotency_outbox', CREATE_IDEMPOTENCY_OUTBOX]);
  for (const file of files) steps.push([file, [readFileSync(file, 'utf8')]]);
  await run('BEGIN');
  try {
    for (const [, statements] of steps) for (const statement of statements) await run(statement);
    await run('COMMIT');
  } catch (error) {
    await run('ROLLBACK').catch(() => undefined);
    throw error;
  }
  return steps.map(([what]) => `applied: ${what}`);
}
