import type { StoredResponse } from '../stored-response.js';

/** The columns of a completed key's row that hold its outcome, and what names the row. */
export interface OutcomeRow {
  status: number | null;
  response_headers: unknown;
  response_body: Buffer | null;
  fingerprint: Buffer;
}

/**
 * What binds a row's sealed outcome to its row: digests of its scope, the same whether the row
 * names the scope in clear or as digests (so sealed rows survive the digesting migration).
 */
export interface OutcomeOwner {
  /** The SHA-256 of the caller and the key (`ScopedKey.digest`). */
  digest: Buffer;
  /** The SHA-256 of the endpoint (`ScopedKey.endpointDigest`). */
  endpointDigest: Buffer;
}

/**
 * How outcomes are written to and read from the key table: in clear (`CLEAR_OUTCOMES`), or
 * sealed with AES-256-GCM (`SealedOutcomes`). Resolved once, from the module's `storage`.
 */
export interface StoredOutcomes {
  /** The `response_headers` (JSON text) and `response_body` parameters of `response`. */
  columns(response: StoredResponse, owner: OutcomeOwner, fingerprint: Buffer): [headers: string, body: Buffer];
  /** The outcome a completed row holds; throws `UnreadableOutcomeError` when it cannot be trusted. */
  read(row: OutcomeRow, owner: OutcomeOwner): StoredResponse;
}

/** Outcomes stored as the client received them: headers as JSON pairs, the body's exact bytes. */
export const CLEAR_OUTCOMES: StoredOutcomes = {
  columns: (response) => [JSON.stringify(response.headers), response.body],
  read: (row) => clearOutcome(row),
};

/** The outcome of a row written in clear. */
export function clearOutcome(row: OutcomeRow): StoredResponse {
  return {
    status: row.status!,
    headers: (row.response_headers as [string, string][] | null) ?? [],
    body: row.response_body ?? Buffer.alloc(0),
  };
}

/** The id of the key a sealed row's `response_headers` names; `undefined` for a row in clear. */
export function sealedWith(headers: unknown): string | undefined {
  if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) return undefined;
  const id = (headers as { sealedWith?: unknown }).sealedWith;
  return typeof id === 'string' ? id : '';
}
