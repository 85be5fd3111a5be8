import type { Statement } from '../hosts/database-host.js';
import type { CommittedEffect } from '../hosts/execution-context.js';
import { deriveDownstreamKey } from '../key/downstream-key.js';
import type { ScopedKey } from '../key/scoped-key.js';
import { STAGE_MESSAGES } from '../store/outbox/outbox.sql.js';

/** One message staged, ready for its row. */
export interface StagedRow {
  publisher: string;
  destination: string;
  orderingKey?: string;
  payload: Buffer;
  headers: Record<string, string>;
}

/**
 * The messages one keyed execution staged: written with its outcome, in its transaction, as one
 * statement (`STAGE_MESSAGES`), then `onCommitted` is told. A message's id is derived from the key
 * and its position among them (`deriveDownstreamKey(scope, 'outbox/<n>')`): the same whichever
 * instance relays it and however often, and the same for the n-th message of every run of the
 * key's work (only a committed run's are ever sent). Messages without an ordering key are ordered
 * by their key: one key's messages leave in the order staged.
 */
export class StagedMessages implements CommittedEffect {
  private readonly rows: StagedRow[] = [];
  private orderedByKey?: string;

  constructor(
    private readonly scope: ScopedKey,
    private readonly onCommitted: () => void,
  ) {}

  /** Adds a message; returns its id. */
  add(row: StagedRow): string {
    const id = deriveDownstreamKey(this.scope, `outbox/${this.rows.length}`);
    this.rows.push(row);
    return id;
  }

  statement(): Statement {
    const ids = this.rows.map((_, position) => deriveDownstreamKey(this.scope, `outbox/${position}`));
    this.orderedByKey ??= deriveDownstreamKey(this.scope, 'outbox');
    return [
      STAGE_MESSAGES,
      [
        ids,
        this.rows.map((row) => row.publisher),
        this.rows.map((row) => row.destination),
        this.rows.map((row) => row.orderingKey ?? this.orderedByKey),
        this.rows.map((row) => row.payload),
        this.rows.map((row) => JSON.stringify(row.headers)),
      ],
    ];
  }

  committed(): void {
    this.onCommitted();
  }
}
