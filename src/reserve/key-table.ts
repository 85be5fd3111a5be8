import { Inject, Injectable } from '@nestjs/common';
import { TransactionHost } from '../hosts/transaction-host.js';
import { KEY_TABLE_KIND } from './key-table.sql.js';

/** How long the lookup of the table's kind may take. */
const LOOKUP_TIMEOUT_MS = 10_000;

/**
 * Which `idempotency_keys` the database holds: the plain table, or the opt-in one partitioned by
 * expiry (`CreatePartitionedIdempotencyKeys1795996800000`), whose key row is written without
 * `ON CONFLICT` and whose sweeper drops partitions. Looked up once, at bootstrap (the sweeper
 * asks first); a lookup that fails is tried again by the next caller. A table missing at
 * bootstrap counts as plain.
 */
@Injectable()
export class KeyTable {
  private lookup?: Promise<boolean>;

  constructor(@Inject(TransactionHost) private readonly host: TransactionHost) {}

  /** Whether the table is partitioned by expiry. */
  partitioned(): Promise<boolean> {
    this.lookup ??= this.host
      .runAlone('looking up the idempotency_keys table', [KEY_TABLE_KIND, []], { timeoutMs: LOOKUP_TIMEOUT_MS })
      .then(({ rows }) => rows[0]?.partitioned === true)
      .catch((error: unknown) => {
        this.lookup = undefined;
        throw error;
      });
    return this.lookup;
  }
}
