import type { Statement } from '../hosts/database-host.js';
import type { CommittedEffect } from '../hosts/execution-context.js';
import { deriveDownstreamKey } from '../key/downstream-key.js';
import type { ScopedKey } from '../key/scoped-key.js';
import { messageColumns } from '../store/outbox/outbox-payloads.js';
import { IdempotencyError } from '../idempotency.errors.js';
import { COMPLETE_LEASE_AND_STAGE, STAGE_MESSAGES } from '../store/outbox/outbox.sql.js';
import { COMPLETE_LEASE } from '../store/table/record.sql.js';
import type { StoredOutcomes } from '../store/protect/stored-outcomes.js';

/** One message to stage. */
export interface StagedRow {
  publisher: string;
  destination: string;
  orderingKey?: string;
  payload: Buffer;
  headers: Record<string, string>;
}

/** A staged message's row, its columns written (sealed, when storage is) as it was staged. */
interface RowColumns {
  messageId: string;
  publisher: string;
  destination: string;
  orderingKey: string;
  headers: string;
  payload: Buffer;
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
  private readonly rows: RowColumns[] = [];
  private readonly orderedByKey: string;

  constructor(
    private readonly scope: ScopedKey,
    private readonly outcomes: StoredOutcomes,
    private readonly onCommitted: () => void,
  ) {
    this.orderedByKey = deriveDownstreamKey(scope, 'outbox');
  }

  /** Adds a message; returns its id. */
  add(row: StagedRow): string {
    const messageId = deriveDownstreamKey(this.scope, `outbox/${this.rows.length}`);
    const { publisher, destination } = row;
    const [headers, payload] = messageColumns(this.outcomes, { messageId, publisher, destination }, row);
    this.rows.push({
      messageId,
      publisher,
      destination,
      orderingKey: row.orderingKey ?? this.orderedByKey,
      headers,
      payload,
    });
    return messageId;
  }

  statement(): Statement {
    const column = <K extends keyof RowColumns>(name: K) => this.rows.map((row) => row[name]);
    return [
      STAGE_MESSAGES,
      [
        column('messageId'),
        column('publisher'),
        column('destination'),
        column('orderingKey'),
        column('payload'),
        column('headers'),
      ],
    ];
  }

  /** Lease mode's recording (`COMPLETE_LEASE`) with the messages, in one statement. */
  withRecording([recording, params]: Statement): Statement {
    if (recording !== COMPLETE_LEASE) throw new IdempotencyError(`the outbox cannot stage with ${recording.name}`);
    return [COMPLETE_LEASE_AND_STAGE, [...params, ...this.statement()[1]]];
  }

  committed(): void {
    this.onCommitted();
  }
}
