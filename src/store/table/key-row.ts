import type { IdempotentRequest } from '../../key/idempotent-request.js';

/** The row of a scoped key, as KEY_ROW reads it. */
export interface KeyRow {
  fingerprint: Buffer;
  state: 'in_progress' | 'completed';
  status: number | null;
  /** Header pairs, or `{ sealedWith }` for a sealed outcome. */
  response_headers: unknown;
  response_body: Buffer | null;
  expired: boolean;
  /** Expired, or a lease that ended with this request's fingerprint. */
  takeable: boolean;
  /** Completed, past its ttl, kept as a tombstone: its response is no longer answered. */
  tombstone: boolean;
  lease_seconds_left: number | null;
  /** How long its response is kept (ms from now). */
  expires_in_ms: string;
  /** When the row goes (ms since the epoch): a retry is then a new request. */
  expires_at_ms: string;
  /** A tombstone's: when its response went, and when its key completed (ms since the epoch). */
  response_expired_at_ms: string | null;
  completed_at_ms: string | null;
}

/** Statement parameters that name a key's row: key, caller, endpoint, fingerprint. */
export function keyRowParams({ scope, fingerprint }: IdempotentRequest): unknown[] {
  return [scope.row.key, scope.row.caller, scope.row.endpoint, fingerprint];
}
