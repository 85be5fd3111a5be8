import { IdempotencyConfigurationError } from '../idempotency.errors.js';
import { aBoolean, milliseconds, oneOf } from './checks.js';
import { DEFAULT_MODE, MAX_LEASE_MS, MAX_TTL_MS, MIN_LEASE_MS } from './defaults.js';
import type { Duration } from './duration.js';
import type { IdempotencyMode } from './route-options.js';

/** What every entry's options say of how a key is held and kept: a route's, a message handler's, a call's. */
export interface ExecutionOptions {
  /** How long a completed key is remembered. Default: the module's `ttl`. */
  ttl?: Duration;
  /** `'transactional'` (the work's writes in the key's transaction) or `'lease'`. Default: `'transactional'`. */
  mode?: IdempotencyMode;
  /** Lease mode's lease. Default: the module's `lease`. */
  lease?: Duration;
  /** Lease mode: whether the lease is renewed while the work runs. Default: the module's `renewLease`. */
  renewLease?: boolean;
  /**
   * Keeps a tombstone of each completed key: past its `ttl` the response (or result) is dropped,
   * but that the key completed, when, and with which status, is kept until this long after it
   * completed, and a retry meanwhile runs nothing (HTTP: 410; a provider's route: 200; a message or
   * job: done). Longer than `ttl`. For senders that retry longer than a response is worth keeping
   * (webhook providers, queues, batch re-runs). Default: none (a key past its ttl is a new request).
   */
  tombstone?: Duration;
}

/** {@link ExecutionOptions} over the module's settings, checked. */
export interface ExecutionSettings {
  ttlMs: number;
  mode: IdempotencyMode;
  leaseMs: number;
  renewLease: boolean;
  /** How long after completion a key is kept as a tombstone (`tombstone`); none: not kept. */
  tombstoneMs?: number;
}

/**
 * An entry's execution settings: each option given (not `undefined`) checked, each other the
 * module's. Called inside the entry's `naming()`, so that an error names the handler.
 */
export function executionSettings(
  module: Omit<ExecutionSettings, 'mode'>,
  options: ExecutionOptions,
): ExecutionSettings {
  const settings: ExecutionSettings = {
    ttlMs: options.ttl === undefined ? module.ttlMs : milliseconds(options.ttl, 'ttl', { minMs: 1, maxMs: MAX_TTL_MS }),
    mode: options.mode === undefined ? DEFAULT_MODE : oneOf(options.mode, ['transactional', 'lease'], 'mode'),
    leaseMs:
      options.lease === undefined
        ? module.leaseMs
        : milliseconds(options.lease, 'lease', { minMs: MIN_LEASE_MS, maxMs: MAX_LEASE_MS }),
    renewLease: options.renewLease === undefined ? module.renewLease : aBoolean(options.renewLease, 'renewLease'),
  };
  if (options.tombstone !== undefined) {
    settings.tombstoneMs = milliseconds(options.tombstone, 'tombstone', { minMs: 1, maxMs: MAX_TTL_MS });
    if (settings.tombstoneMs <= settings.ttlMs)
      throw new IdempotencyConfigurationError(
        `option "tombstone" must be longer than ttl (${settings.tombstoneMs} ms is not longer than ${settings.ttlMs} ms): it is how long after its completion a key is remembered, its response dropped at the ttl`,
      );
  }
  return settings;
}

/** `options` without its `undefined` fields, so that spreading it over defaults keeps them. */
export function defined<T extends object>(options: T | undefined): Partial<T> {
  const result: Partial<T> = {};
  for (const [name, value] of Object.entries(options ?? {}))
    if (value !== undefined) result[name as keyof T] = value as T[keyof T];
  return result;
}
