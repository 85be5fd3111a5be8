import { IdempotencyError } from '../../idempotency.errors.js';

/**
 * A completed key's row whose stored outcome cannot be read back: sealed with a key id that
 * `storage.encryption.keys` does not list, or whose authentication tag fails (the row was
 * altered, or sealed under another key of the same id). The request is answered 503 and nothing
 * runs: neither a replay of bytes that cannot be trusted nor a second execution.
 */
export class UnreadableOutcomeError extends IdempotencyError {
  constructor(
    why: string,
    /** The id of the key the row names, when it names one. */
    readonly keyId?: string,
  ) {
    super(`a stored outcome cannot be read: ${why}`);
  }
}
