import { IdempotencyConfigurationError } from '../idempotency.errors.js';
import type { FingerprintOption } from '../parse/fingerprint.js';
import type { KeyFormat } from '../parse/key-format.js';
import { type Duration, toMilliseconds } from './duration.js';

/*
 * The checks of option values: each takes a value whose default is already applied, and returns
 * it (converted where it says so) or throws an IdempotencyConfigurationError naming the option.
 */

/**
 * Runs `resolve`, naming `where` in the configuration error it throws (which module options, which
 * `@Idempotent()` route), so that an app with many routes learns which one to change.
 */
export function naming<T>(where: string, resolve: () => T): T {
  try {
    return resolve();
  } catch (error) {
    if (!(error instanceof IdempotencyConfigurationError)) throw error;
    throw new IdempotencyConfigurationError(`${where}: ${error.message.replace(/^nestjs-pg-idempotency: /, '')}`);
  }
}

/** `value` when it is one of `allowed`; a typo must not fall back to another behaviour. */
export function oneOf<T extends string>(value: T, allowed: readonly T[], option: string): T {
  if (allowed.includes(value)) return value;
  throw new IdempotencyConfigurationError(`option "${option}" must be ${allowed.map((a) => `'${a}'`).join(' or ')}, got ${describe(value)}`);
}

export function aFunction<T extends Function>(value: T, option: string): T {
  if (typeof value === 'function') return value;
  throw new IdempotencyConfigurationError(`option "${option}" must be a function, got ${describe(value)}`);
}

export function aBoolean(value: boolean, option: string): boolean {
  if (typeof value === 'boolean') return value;
  throw new IdempotencyConfigurationError(`option "${option}" must be true or false, got ${String(value)}`);
}

export function aPositiveInteger(value: number, option: string): number {
  if (Number.isInteger(value) && value >= 1) return value;
  throw new IdempotencyConfigurationError(`option "${option}" must be a positive integer, got ${value}`);
}

/** A node-postgres Pool (`connect()` and `options`), or nothing. */
export function aPool<T extends { connect?: unknown; options?: unknown }>(value: T | undefined): T | undefined {
  if (value === undefined || (typeof value === 'object' && value !== null && typeof value.connect === 'function' && typeof value.options === 'object')) {
    return value;
  }
  throw new IdempotencyConfigurationError(`option "pool" must be a node-postgres Pool, got ${describe(value)}`);
}

export function aKeyFormat(value: KeyFormat): KeyFormat {
  if (value === 'uuid-or-ulid' || value === 'printable-ascii' || value instanceof RegExp || typeof value === 'function') return value;
  throw new IdempotencyConfigurationError(`option "keyFormat" must be 'uuid-or-ulid', 'printable-ascii', a RegExp or a function, got ${describe(value)}`);
}

/** A list of body field paths, or a function: a lone string would be read as a list of its characters. */
export function aFingerprint(value: FingerprintOption | undefined): FingerprintOption | undefined {
  if (value === undefined || typeof value === 'function') return value;
  if (Array.isArray(value) && value.every((path) => typeof path === 'string' && path !== '')) return value;
  throw new IdempotencyConfigurationError(`option "fingerprint" must be a list of body field paths (['amount']) or a function, got ${describe(value)}`);
}

export function headerNames(value: readonly string[]): readonly string[] {
  if (Array.isArray(value) && value.every((name) => typeof name === 'string' && /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name))) return value;
  throw new IdempotencyConfigurationError(`option "replayHeaders" must be a list of header names, got ${describe(value)}`);
}

/** Milliseconds in `duration`, at most `maxMs`, and at least `minMs` (0 allowed when `minMs` is 0). */
export function milliseconds(duration: Duration, option: string, { minMs = 0, maxMs }: { minMs?: number; maxMs: number }): number {
  const ms = toMilliseconds(duration, option);
  if (minMs >= 1 && ms < 1) throw new IdempotencyConfigurationError(`option "${option}" must be longer than 0`);
  if (ms < minMs) throw new IdempotencyConfigurationError(`option "${option}" must be at least ${minMs} ms, got ${ms}`);
  if (ms > maxMs) throw new IdempotencyConfigurationError(`option "${option}" must be at most ${maxMs} ms, got ${ms}`);
  return ms;
}

function describe(value: unknown): string {
  return typeof value === 'string' ? `'${value}'` : Array.isArray(value) ? JSON.stringify(value) : String(value);
}
