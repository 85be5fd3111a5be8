import { IdempotencyConfigurationError } from '../idempotency.errors.js';
import { aBoolean, aPositiveInteger, describe, milliseconds } from './checks.js';
import { MAX_TIMER_MS, MAX_TTL_MS } from './defaults.js';
import type { OutboxOptions, OutboxSettings } from './outbox-options.js';

/** The outbox's options checked, each missing one its default; `undefined` without an outbox. */
export function outboxSettings(options: OutboxOptions | undefined): OutboxSettings | undefined {
  if (options === undefined) return undefined;
  const publishers = new Map(Object.entries(options.publishers ?? {}));
  if (publishers.size === 0)
    throw new IdempotencyConfigurationError('option "outbox.publishers" must name at least one publisher');
  for (const [name, publisher] of publishers) {
    if (typeof publisher?.publish !== 'function')
      throw new IdempotencyConfigurationError(
        `option "outbox.publishers.${name}" must be a publisher (an object with publish()), got ${describe(publisher)}`,
      );
  }
  return {
    publishers,
    relay: aBoolean(options.relay ?? true, 'outbox.relay'),
    pollIntervalMs: milliseconds(options.pollInterval ?? '1s', 'outbox.pollInterval', {
      minMs: 1,
      maxMs: MAX_TIMER_MS,
    }),
    batchSize: aPositiveInteger(options.batchSize ?? 100, 'outbox.batchSize'),
    claimMs: milliseconds(options.claim ?? '30s', 'outbox.claim', { minMs: 100, maxMs: MAX_TIMER_MS }),
    retryDelayMs: milliseconds(options.retryDelay ?? '1s', 'outbox.retryDelay', { minMs: 1, maxMs: MAX_TIMER_MS }),
    keepSentMs: milliseconds(options.keepSent ?? '1h', 'outbox.keepSent', { maxMs: MAX_TTL_MS }),
  };
}
