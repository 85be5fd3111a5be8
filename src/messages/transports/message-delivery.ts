import type { Settlement } from '../message/message-outcome.js';
import type { ReceivedMessage } from '../message/received-message.js';

/**
 * One delivery of a message, as a transport hands it to the message entry: the message, and how
 * to settle it with the broker once its outcome is recorded.
 */
export interface MessageDelivery {
  readonly message: ReceivedMessage;
  /**
   * Settles the message once (later calls do nothing: a second ack of one delivery would close
   * the broker connection): `requeue` delivers it again after `retryDelayMs`, as its next attempt
   * when its handler `failed` (else as the same attempt: its key was held, or the store down).
   */
  settle(settlement: Settlement, retryDelayMs: number, failed: boolean): Promise<void>;
}

/** Runs `settle` once per delivery: a later call does nothing. */
export function once(settle: MessageDelivery['settle']): MessageDelivery['settle'] {
  let settled: Promise<void> | undefined;
  return (settlement, retryDelayMs, failed) => (settled ??= settle(settlement, retryDelayMs, failed));
}
