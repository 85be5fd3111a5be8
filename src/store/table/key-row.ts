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
  lease_seconds_left: number | null;
  expires_in_ms: string;
}

/** Statement parameters that name a key's row: key, caller, endpoint, fingerprint. */
export function keyRowParams({ scope, fingerprint }: IdempotentRequest): unknown[] {
  return [scope.row.key, scope.row.caller, scope.row.endpoint, fingerprint];
}
