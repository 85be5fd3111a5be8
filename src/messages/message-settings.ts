import { aFunction, aPositiveInteger, milliseconds, naming } from '../options/checks.js';
import { MAX_TIMER_MS } from '../options/defaults.js';
import { defined, type ExecutionSettings, executionSettings } from '../options/execution-settings.js';
import type { IdempotencySettings } from '../options/settings.js';
import type { KeyStorage } from '../key/scoped-key.js';
import { type IdempotentMessageOptions, MESSAGE_DEFAULTS } from './message-options.js';
import type { ReceivedMessage } from './message/received-message.js';

/** A message handler's settings: its options over the module's, checked once. */
export interface MessageSettings extends ExecutionSettings {
  /** `Controller.method`, for events and metrics. */
  handler: string;
  keyOf: (message: ReceivedMessage) => string | undefined;
  tenantOf: (message: ReceivedMessage) => string | undefined;
  maxAttempts: number;
  retryDelayMs: number;
  /** The module's `storage.keys`. */
  keyStorage: KeyStorage;
}

const BY_MESSAGE_ID = (message: ReceivedMessage) => message.id;
const NO_TENANT = () => undefined;

/** The settings of a message handler named `handler`; an invalid option throws, naming it. */
export function resolveMessageOptions(
  module: IdempotencySettings,
  options: IdempotentMessageOptions,
  handler: string,
): MessageSettings {
  return naming(`@IdempotentMessage() on ${handler}`, () => {
    const merged = { ...MESSAGE_DEFAULTS, ...defined(options) };
    return {
      handler,
      ...executionSettings(module, merged),
      keyOf: merged.key === 'message-id' ? BY_MESSAGE_ID : aFunction(merged.key, 'key'),
      tenantOf: merged.tenant === undefined ? NO_TENANT : aFunction(merged.tenant, 'tenant'),
      maxAttempts: aPositiveInteger(merged.maxAttempts, 'maxAttempts'),
      retryDelayMs: milliseconds(merged.retryDelay, 'retryDelay', { maxMs: MAX_TIMER_MS }),
      keyStorage: module.keyStorage,
    };
  });
}
