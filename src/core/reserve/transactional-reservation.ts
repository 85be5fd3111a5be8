import type { DatabaseHost, KeyTransaction } from '../../hosts/database-host.js';
import { TransactionHold } from '../hold/transaction-hold.js';
import type { IdempotentRequest } from '../../key/idempotent-request.js';
import { type KeyRow, keyRowParams } from '../../store/table/key-row.js';
import type { StoredOutcomes } from '../../store/protect/stored-outcomes.js';
import type { KeyTableStrategy } from '../../store/table/key-table-strategy.js';
import { FENCE_LEASE, KEY_ROW, LOCK_KEY } from '../../store/table/reservation.sql.js';
import { refusalFor } from './refusal.js';
import type { Refusal } from './reservation.js';

type Reserved = { kind: 'held'; hold: TransactionHold } | (Refusal & { expiresInMs?: number });

/**
 * Transactional mode: opens the key's transaction with the key's advisory lock and a lookup of
 * its row (one round trip); the key's row is written, with the outcome, just before the commit
 * (`TransactionHold`), by the table's recording over a row in the way or where there was none.
 * Unless the key is held, the transaction is already ended and its connection given back.
 */
export async function reserveInTransaction(
  host: DatabaseHost,
  request: IdempotentRequest,
  table: KeyTableStrategy,
  outcomes: StoredOutcomes,
): Promise<Reserved> {
  const { takingOver, fresh } = table.recording;
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
      return { kind: 'held', hold: new TransactionHold(transaction, request, fresh, outcomes) };
    }
    if (lock.locked === true && row?.takeable && (await takeOver(transaction, row, params))) {
      return { kind: 'held', hold: new TransactionHold(transaction, request, takingOver, outcomes) };
    }
    await transaction.end('rollback');
    return refusalFor(row, request, outcomes);
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
