import { aFunction, aPositiveInteger, milliseconds, naming, oneOf } from '../options/checks.js';
import { MAX_LEASE_MS, MAX_TIMER_MS, MAX_TTL_MS, MIN_LEASE_MS } from '../options/defaults.js';
import type { IdempotencyMode } from '../options/module-options.js';
import type { IdempotencySettings } from '../options/settings.js';
import type { KeyStorage } from '../parse/scoped-key.js';
import { type IdempotentMessageOptions, MESSAGE_DEFAULTS } from './message-options.js';
import type { ReceivedMessage } from './received-message.js';

/** A message handler's settings: its options over the module's, checked once. */
export interface MessageSettings {
  /** `Controller.method`, for events and metrics. */
  handler: string;
  keyOf: (message: ReceivedMessage) => string | undefined;
  tenantOf: (message: ReceivedMessage) => string | undefined;
  ttlMs: number;
  mode: IdempotencyMode;
  leaseMs: number;
  renewLease: boolean;
  maxAttempts: number;
  retryDelayMs: number;
  /** The module's `storage.keys`. */
  keyStorage: KeyStorage;
}

const BY_MESSAGE_ID = (message: ReceivedMessage) => message.id;
const NO_TENANT = () => undefined;

/** The settings of a message handler named `handler`; an invalid option throws, naming it. */
export function resolveMessageOptions(module: IdempotencySettings, options: IdempotentMessageOptions, handler: string): MessageSettings {
  return naming(`@IdempotentMessage() on ${handler}`, () => {
    const merged = { ...MESSAGE_DEFAULTS, ...options };
    return {
      handler,
      keyOf: merged.key === 'message-id' ? BY_MESSAGE_ID : aFunction(merged.key, 'key'),
      tenantOf: merged.tenant === undefined ? NO_TENANT : aFunction(merged.tenant, 'tenant'),
      ttlMs: merged.ttl === undefined ? module.ttlMs : milliseconds(merged.ttl, 'ttl', { minMs: 1, maxMs: MAX_TTL_MS }),
      mode: oneOf(merged.mode, ['transactional', 'lease'], 'mode'),
      leaseMs: merged.lease === undefined ? module.leaseMs : milliseconds(merged.lease, 'lease', { minMs: MIN_LEASE_MS, maxMs: MAX_LEASE_MS }),
      renewLease: module.renewLease,
      maxAttempts: aPositiveInteger(merged.maxAttempts, 'maxAttempts'),
      retryDelayMs: milliseconds(merged.retryDelay, 'retryDelay', { maxMs: MAX_TIMER_MS }),
      keyStorage: module.keyStorage,
    };
  });
}
