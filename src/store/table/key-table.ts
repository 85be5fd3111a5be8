import { Inject, Injectable } from '@nestjs/common';
import { DatabaseHost } from '../../hosts/database-host.js';
import { KEY_TABLE_KIND } from './key-table.sql.js';
import { type KeyTableStrategy, PARTITIONED_TABLE, PLAIN_TABLE } from './key-table-strategy.js';

/** How long the lookup of the table's kind may take. */
const LOOKUP_TIMEOUT_MS = 10_000;

/**
 * Which `idempotency_keys` the database holds, as the strategy that writes its rows: the plain
 * table, or the opt-in one partitioned by expiry (`CreatePartitionedIdempotencyKeys1795996800000`),
 * whose key row is written without `ON CONFLICT` and whose sweeper drops partitions. Looked up
 * once, at bootstrap (the sweeper asks first); a lookup that fails is tried again by the next
 * caller. A table missing at bootstrap counts as plain.
 */
@Injectable()
export class KeyTable {
  private lookup?: Promise<KeyTableStrategy>;

  constructor(@Inject(DatabaseHost) private readonly host: DatabaseHost) {}

  strategy(): Promise<KeyTableStrategy> {
    this.lookup ??= this.host
      .runAlone('looking up the idempotency_keys table', [KEY_TABLE_KIND, []], { timeoutMs: LOOKUP_TIMEOUT_MS })
      .then(({ rows }) => (rows[0]?.partitioned === true ? PARTITIONED_TABLE : PLAIN_TABLE))
      .catch((error: unknown) => {
        this.lookup = undefined;
        throw error;
      });
    return this.lookup;
  }
}
