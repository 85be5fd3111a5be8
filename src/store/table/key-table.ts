import { Inject, Injectable } from '@nestjs/common';
import { DatabaseHost } from '../../hosts/database-host.js';
import { KEY_TABLE_KIND } from './key-table.sql.js';
import { type KeyTableStrategy, PARTITIONED_TABLE, PLAIN_TABLE } from './key-table-strategy.js';
import {
  KEY_TABLE,
  KEY_TABLE_TOMBSTONES,
  missingPart,
  type ModuleTable,
  OUTBOX_TABLE,
  TABLES_SHAPE,
  type TableShape,
} from './module-tables.js';
import { TablesNotMigratedError } from './tables-not-migrated.error.js';

/** How long the lookup of the table's kind may take. */
const LOOKUP_TIMEOUT_MS = 10_000;

/**
 * Which `idempotency_keys` the database holds, as the strategy that writes its rows: the plain
 * table, or the opt-in one partitioned by expiry (`CreatePartitionedIdempotencyKeys1795996800000`),
 * whose key row is written without `ON CONFLICT` and whose sweeper drops partitions. Looked up
 * once, at bootstrap (`verify()`, which also finds a migration not run); a lookup that fails, or
 * finds no table, is tried again by the next caller (a table missing counts as plain meanwhile;
 * the partitioned table's partitions are prepared at bootstrap only, so it must exist by then).
 */
@Injectable()
export class KeyTable {
  private lookup?: Promise<KeyTableStrategy>;

  constructor(@Inject(DatabaseHost) private readonly host: DatabaseHost) {}

  strategy(): Promise<KeyTableStrategy> {
    this.lookup ??= this.host
      .runAlone('looking up the idempotency_keys table', [KEY_TABLE_KIND, []], { timeoutMs: LOOKUP_TIMEOUT_MS })
      .then(({ rows }) => {
        // A table not there yet is looked up again by the next caller: it may be created either way.
        if (rows.length === 0) this.lookup = undefined;
        return rows[0]?.partitioned === true ? PARTITIONED_TABLE : PLAIN_TABLE;
      })
      .catch((error: unknown) => {
        this.lookup = undefined;
        throw error;
      });
    return this.lookup;
  }

  /**
   * The key table's strategy, looked up with the shape of the module's tables (the outbox's too,
   * with `outbox`): `TablesNotMigratedError` when one is missing or lacks a column the module uses.
   */
  async verify(outbox: boolean): Promise<KeyTableStrategy> {
    const tables: ModuleTable[] = outbox
      ? [KEY_TABLE, KEY_TABLE_TOMBSTONES, OUTBOX_TABLE]
      : [KEY_TABLE, KEY_TABLE_TOMBSTONES];
    const { rows } = await this.host.runAlone(
      'looking up the module tables',
      [TABLES_SHAPE, [[...new Set(tables.map((table) => table.name))]]],
      { timeoutMs: LOOKUP_TIMEOUT_MS },
    );
    const shapes = rows as TableShape[];
    const missing = tables.flatMap((table) => {
      // A key table that is not there at all is told once, by its creating migration.
      if (
        table === KEY_TABLE_TOMBSTONES &&
        missingPart(
          KEY_TABLE,
          shapes.find((s) => s.name === KEY_TABLE.name),
        )
      )
        return [];
      const part = missingPart(
        table,
        shapes.find((shape) => shape.name === table.name),
      );
      return part === undefined ? [] : [{ table, part }];
    });
    if (missing.length > 0)
      throw new TablesNotMigratedError(
        missing.map(({ part }) => part),
        missing.map(({ table }) => table),
      );
    const strategy = shapes.find((shape) => shape.name === KEY_TABLE.name)?.partitioned
      ? PARTITIONED_TABLE
      : PLAIN_TABLE;
    this.lookup = Promise.resolve(strategy);
    return strategy;
  }
}
