import type { IdempotencyMode } from '../options/route-options.js';
import type { Duration } from '../options/duration.js';
import type { ReceivedMessage } from './message/received-message.js';

/** Options of `@IdempotentMessage()` and of `IdempotentMessages.consume()`. Every field has a default. */
export interface IdempotentMessageOptions {
  /**
   * The message's key: `'message-id'` (the broker's id: AMQP `message-id`, NATS `Nats-Msg-Id`), or
   * a function of the message (a field of its payload). A message without one is malformed.
   * Default: `'message-id'`.
   */
  key?: 'message-id' | ((message: ReceivedMessage) => string | undefined);
  /** The tenant the key belongs to (keys are scoped by pattern and tenant). Default: none. */
  tenant?: (message: ReceivedMessage) => string | undefined;
  /** How long a completed key is remembered. Default: the module's `ttl`. */
  ttl?: Duration;
  /**
   * Keeps a tombstone of each completed key until this long after it completed (longer than
   * `ttl`): a redelivery past the ttl is acked without running. Default: none.
   */
  tombstone?: Duration;
  /** `'transactional'` (the handler's writes in the key's transaction) or `'lease'`. Default: `'transactional'`. */
  mode?: IdempotencyMode;
  /** Lease mode's lease. Default: the module's `lease`. */
  lease?: Duration;
  /**
   * Deliveries of a message whose handler fails before it is recorded as failed and
   * dead-lettered (a poison message stops looping). Default: `5`.
   */
  maxAttempts?: number;
  /**
   * How long a message waits before it is delivered again: its key held by another consumer, its
   * handler failed, or the key store was unavailable. Default: `'1s'`.
   */
  retryDelay?: Duration;
}

/** The defaults of {@link IdempotentMessageOptions} that do not fall back to a module option. */
export const MESSAGE_DEFAULTS = {
  key: 'message-id',
  maxAttempts: 5,
  retryDelay: '1s',
} as const satisfies IdempotentMessageOptions;
