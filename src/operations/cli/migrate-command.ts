import { readFileSync } from 'node:fs';
import { IdempotencyError } from '../../idempotency.errors.js';
import { ADD_TOMBSTONE_COLUMNS, CREATE_IDEMPOTENCY_KEYS } from '../../store/migrations/idempotency-keys.schema.js';
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

/** Runs one SQL text (one or several statements) on the CLI's connection; resolves to its rows. */
export type RunSql = (text: string) => Promise<{ rows: Array<Record<string, unknown>> }>;

/** Taken for the migration's transaction, so that instances migrating at once run one after another. */
const MIGRATE_LOCK_ID = '7493712083646152802';

/** The migration asked for the partitioned key table where the plain one stands (or the other way round). */
export class KeyTableKindError extends IdempotencyError {}

/**
 * Applies the module's tables (the same statements as the shipped migrations) and then `files`,
 * in one transaction under an advisory lock: all of it, or nothing. An `idempotency_keys` that
 * exists is left as it is (no index of the other kind's is built on a live table); asking for the
 * partitioned table where the plain one stands is refused (docs/partitioned-keys.md says how to
 * move). Returns a line per table or file: `applied`, or `present`.
 */
export async function migrate(run: RunSql, { partitioned, outbox, files }: MigrateRequest): Promise<string[]> {
  const lines: string[] = [];
  await run('BEGIN');
  try {
    await run(`SELECT pg_advisory_xact_lock(${MIGRATE_LOCK_ID})`);
    const { rows } = await run(
      `SELECT c.relkind::text AS kind FROM pg_class AS c WHERE c.oid = to_regclass('idempotency_keys')`,
    );
    const kind = rows[0]?.kind as string | undefined;
    if (kind === undefined) {
      for (const statement of partitioned ? CREATE_PARTITIONED_IDEMPOTENCY_KEYS : CREATE_IDEMPOTENCY_KEYS)
        await run(statement);
      lines.push(`applied: idempotency_keys${partitioned ? ' (partitioned by expiry)' : ''}`);
    } else if (partitioned && kind !== 'p') {
      throw new KeyTableKindError(
        'idempotency_keys exists and is not partitioned: moving it to the partitioned table is a migration of its own (docs/partitioned-keys.md, "Moving an existing table")',
      );
    } else {
      lines.push(`present: idempotency_keys${kind === 'p' ? ' (partitioned by expiry)' : ''}`);
      const { rows } = await run(
        `SELECT (SELECT count(*)::int FROM pg_attribute WHERE attrelid = to_regclass('idempotency_keys')
                  AND attname = ANY('{response_expires_at,completed_at}') AND NOT attisdropped) AS columns,
                to_regclass('idempotency_keys_response_expires_at_idx') IS NOT NULL AS indexed`,
      );
      if (rows[0]?.columns !== 2 || rows[0]?.indexed !== true) {
        for (const statement of ADD_TOMBSTONE_COLUMNS) await run(statement);
        lines.push('applied: idempotency_keys tombstone columns (1796860800000-add-idempotency-tombstones.sql)');
      }
    }
    if (outbox) {
      const { rows } = await run(`SELECT to_regclass('idempotency_outbox') IS NOT NULL AS present`);
      for (const statement of CREATE_IDEMPOTENCY_OUTBOX) await run(statement);
      lines.push(`${rows[0]?.present ? 'present' : 'applied'}: idempotency_outbox`);
    }
    for (const file of files) {
      await run(readFileSync(file, 'utf8'));
      lines.push(`applied: ${file}`);
    }
    await run('COMMIT');
  } catch (error) {
    await run('ROLLBACK').catch(() => undefined);
    throw error;
  }
  return lines;
}
