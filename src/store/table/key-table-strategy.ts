import { DatabaseFailure } from '../../hosts/database-failures.js';
import type { Bound, DatabaseHost, SqlStatement } from '../../hosts/database-host.js';
import { RECORD_FRESH_OUTCOME_PARTITIONED, RECORD_OUTCOME, RECORD_OUTCOME_PARTITIONED } from './record.sql.js';
import { LOCK_KEY_OR_FAIL, RESERVE_LEASE, RESERVE_LEASE_PARTITIONED } from './reservation.sql.js';

/** The parameters of a lease reservation: the scoped key, its fingerprint, ttl, lease and fencing token. */
export interface LeaseReservation {
  lockId: string;
  key: string;
  caller: string;
  endpoint: string;
  fingerprint: Buffer;
  ttlMs: number;
  leaseMs: number;
  token: string;
}

/** What differs between the plain key table and the one partitioned by expiry: how a key's row is written. */
export interface KeyTableStrategy {
  readonly partitioned: boolean;
  /**
   * Transactional mode's recording, the last statement before COMMIT: `takingOver` over a row the
   * reservation found in the way, `fresh` where it found none.
   */
  readonly recording: { readonly takingOver: SqlStatement; readonly fresh: SqlStatement };
  /** Lease mode: whether the reservation wrote the key's row (false: its lock or a row was in the way). */
  reserveLease(host: DatabaseHost, lease: LeaseReservation, bound: Bound): Promise<boolean>;
}

/** The plain table: one statement reserves a lease, `ON CONFLICT` over a row in the way. */
export const PLAIN_TABLE: KeyTableStrategy = {
  partitioned: false,
  recording: { takingOver: RECORD_OUTCOME, fresh: RECORD_OUTCOME },
  async reserveLease(host, { lockId, key, caller, endpoint, fingerprint, ttlMs, leaseMs, token }, bound) {
    const { rows } = await host.runAlone(
      'reserving the key',
      [RESERVE_LEASE, [lockId, key, caller, endpoint, fingerprint, ttlMs, leaseMs, token]],
      bound,
    );
    return rows.length === 1;
  },
};

/** Division by zero: `LOCK_KEY_OR_FAIL` found the key's lock taken. */
const LOCK_TAKEN = '22012';

/**
 * The partitioned table, whose unique key holds `expires_at` and so serves no `ON CONFLICT` on
 * the scoped key: the key's lock and the reservation are two statements of one message (one
 * round trip all the same).
 */
export const PARTITIONED_TABLE: KeyTableStrategy = {
  partitioned: true,
  recording: { takingOver: RECORD_OUTCOME_PARTITIONED, fresh: RECORD_FRESH_OUTCOME_PARTITIONED },
  async reserveLease(host, { lockId, key, caller, endpoint, fingerprint, ttlMs, leaseMs, token }, bound) {
    try {
      const [, reserved] = await host.runTogether(
        'reserving the key',
        [
          [LOCK_KEY_OR_FAIL, [lockId]],
          [RESERVE_LEASE_PARTITIONED, [key, caller, endpoint, fingerprint, ttlMs, leaseMs, token]],
        ],
        bound,
      );
      return reserved.rows.length === 1;
    } catch (error) {
      if (error instanceof DatabaseFailure && error.sqlState === LOCK_TAKEN) return false;
      throw error;
    }
  },
};
