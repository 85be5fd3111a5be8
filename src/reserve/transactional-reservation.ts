import { StatementsVanishedError } from '../hosts/pg/statement-sender.js';
import type { KeyTransaction, SqlStatement, TransactionHost } from '../hosts/transaction-host.js';
import { RECORD_FRESH_OUTCOME_PARTITIONED, RECORD_OUTCOME, RECORD_OUTCOME_PARTITIONED } from '../record/record.sql.js';
import { TransactionHold } from '../record/transaction-hold.js';
import { type KeyRow, keyRowParams, refusalFor } from './key-row.js';
import type { KeyRequest, Refusal } from './reservation.js';
import { FENCE_LEASE, KEY_ROW, LOCK_KEY } from './reservation.sql.js';

/** How the key's row is written: over a row the reservation found in the way, or where it found none. */
interface Recording {
  readonly takingOver: SqlStatement;
  readonly fresh: SqlStatement;
}

const PLAIN: Recording = { takingOver: RECORD_OUTCOME, fresh: RECORD_OUTCOME };
const PARTITIONED: Recording = { takingOver: RECORD_OUTCOME_PARTITIONED, fresh: RECORD_FRESH_OUTCOME_PARTITIONED };

/**
 * Transactional mode: opens the key's transaction with the key's advisory lock and a lookup of
 * its row (one round trip); the key's row is written, with the outcome, just before the commit
 * (`TransactionHold`), by `RECORD_OUTCOME`; on the partitioned table by
 * `RECORD_OUTCOME_PARTITIONED` over a row in the way, `RECORD_FRESH_OUTCOME_PARTITIONED` where
 * there was none. Unless the key is held, the transaction is already ended and its connection
 * given back.
 */
export function reserveInTransaction(host: TransactionHost, request: KeyRequest, partitioned: boolean): Promise<Reserved> {
  const recording = partitioned ? PARTITIONED : PLAIN;
  return reserveOnce(host, request, recording).catch((error: unknown) => {
    // The failed transaction was rolled back and its connection given back; the statements now go whole.
    if (error instanceof StatementsVanishedError) return reserveOnce(host, request, recording);
    throw error;
  });
}

type Reserved = { kind: 'held'; hold: TransactionHold } | (Refusal & { expiresInMs?: number });

async function reserveOnce(host: TransactionHost, request: KeyRequest, { takingOver, fresh }: Recording): Promise<Reserved> {
  const params = keyRowParams(request);
  const { transaction, results } = await host.begin(
    [
      [LOCK_KEY, [request.scope.lockId]],
      [KEY_ROW, params],
    ],
    // Prepared ahead, once each (the plain table's two recordings are one statement).
    [FENCE_LEASE, takingOver, fresh],
  );
  try {
    const [[lock], [row]] = results.map((result) => result.rows) as [[{ locked: boolean }], [KeyRow?]];
    if (lock.locked === true && row === undefined) {
      return { kind: 'held', hold: new TransactionHold(transaction, request, fresh) };
    }
    if (lock.locked === true && row?.takeable && (await takeOver(transaction, row, params))) {
      return { kind: 'held', hold: new TransactionHold(transaction, request, takingOver) };
    }
    await transaction.end('rollback');
    return refusalFor(row, request);
  } catch (error) {
    await transaction.end('rollback');
    throw error;
  }
}

/**
 * Whether a takeable row in the way, its key's lock taken, can be taken over. An expired
 * completed row can: the key's row replaces it at the commit. A lease's row is fenced first
 * (FENCE_LEASE, one more round trip, only then), so that its stale holder cannot record over it.
 */
async function takeOver(transaction: KeyTransaction, row: KeyRow, params: unknown[]): Promise<boolean> {
  if (row.state === 'completed') return true;
  const { rowCount } = await transaction.runBeforeHandler([FENCE_LEASE, params]);
  if (rowCount === 1) return true;
  // Deleted meanwhile (the sweeper): with the key's lock held, no row means the key is free.
  const { rows } = await transaction.runBeforeHandler([KEY_ROW, params]);
  return rows.length === 0;
}
