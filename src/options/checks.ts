import { IdempotencyConfigurationError } from '../idempotency.errors.js';
import type { FingerprintOption } from '../key/fingerprint.js';
import type { KeyFormat } from '../key/key-format.js';
import { callerProblem } from '../key/key-limits.js';
import type { KeyStorage } from '../key/scoped-key.js';
import { SealedOutcomes } from '../store/protect/sealed-outcomes.js';
import { CLEAR_OUTCOMES, type StoredOutcomes } from '../store/protect/stored-outcomes.js';
import type { Redaction } from '../store/redaction.js';
import type { CallerResolver, RedactionOptions, StorageOptions } from './module-options.js';
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
  throw new IdempotencyConfigurationError(
    `option "${option}" must be ${allowed.map((a) => `'${a}'`).join(' or ')}, got ${describe(value)}`,
  );
}

export function aFunction<T extends Function>(value: T, option: string): T {
  if (typeof value === 'function') return value;
  throw new IdempotencyConfigurationError(`option "${option}" must be a function, got ${describe(value)}`);
}

/**
 * A route's `caller`: a resolver, or one name for every request (a webhook's provider), as a
 * resolver that returns it.
 */
export function aCaller(value: CallerResolver | string): CallerResolver {
  if (typeof value === 'function') return value;
  if (typeof value === 'string' && value !== '' && callerProblem(value) === undefined) return () => value;
  throw new IdempotencyConfigurationError(
    `option "caller" must be a function or a caller's name (a non-empty string), got ${describe(value)}`,
  );
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
  if (
    value === undefined ||
    (typeof value === 'object' &&
      value !== null &&
      typeof value.connect === 'function' &&
      typeof value.options === 'object')
  ) {
    return value;
  }
  throw new IdempotencyConfigurationError(`option "pool" must be a node-postgres Pool, got ${describe(value)}`);
}

/** `problemDocumentation` as the `Link` header value it becomes: an absolute http(s) URL, or nothing. */
export function aProblemLink(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  let url: URL | undefined;
  try {
    url = typeof value === 'string' ? new URL(value) : undefined;
  } catch {
    url = undefined;
  }
  if (url?.protocol !== 'https:' && url?.protocol !== 'http:')
    throw new IdempotencyConfigurationError(
      `option "problemDocumentation" must be an absolute http(s) URL, got ${describe(value)}`,
    );
  return `<${url.href}>; rel="describedby"`;
}

export function aKeyFormat(value: KeyFormat): KeyFormat {
  if (value === 'uuid-or-ulid' || value === 'printable-ascii' || value instanceof RegExp || typeof value === 'function')
    return value;
  throw new IdempotencyConfigurationError(
    `option "keyFormat" must be 'uuid-or-ulid', 'printable-ascii', a RegExp or a function, got ${describe(value)}`,
  );
}

/** A list of body field paths, or a function: a lone string would be read as a list of its characters. */
export function aFingerprint(value: FingerprintOption | undefined): FingerprintOption | undefined {
  if (value === undefined || typeof value === 'function') return value;
  if (Array.isArray(value) && value.every((path) => typeof path === 'string' && path !== '')) return value;
  throw new IdempotencyConfigurationError(
    `option "fingerprint" must be a list of body field paths (['amount']) or a function, got ${describe(value)}`,
  );
}

export function headerNames(value: readonly string[]): readonly string[] {
  if (
    Array.isArray(value) &&
    value.every((name) => typeof name === 'string' && /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name))
  )
    return value;
  throw new IdempotencyConfigurationError(
    `option "replayHeaders" must be a list of header names, got ${describe(value)}`,
  );
}

/** Milliseconds in `duration`, at most `maxMs`, and at least `minMs` (0 allowed when `minMs` is 0). */
export function milliseconds(
  duration: Duration,
  option: string,
  { minMs = 0, maxMs }: { minMs?: number; maxMs: number },
): number {
  const ms = toMilliseconds(duration, option);
  if (minMs >= 1 && ms < 1) throw new IdempotencyConfigurationError(`option "${option}" must be longer than 0`);
  if (ms < minMs) throw new IdempotencyConfigurationError(`option "${option}" must be at least ${minMs} ms, got ${ms}`);
  if (ms > maxMs) throw new IdempotencyConfigurationError(`option "${option}" must be at most ${maxMs} ms, got ${ms}`);
  return ms;
}

const KEY_ID = /^[\x21-\x7e]{1,64}$/;

/** `storage`, as the key storage and the outcomes' store it names. */
export function aStorage(storage: StorageOptions = {}): { keyStorage: KeyStorage; outcomes: StoredOutcomes } {
  const keyStorage = oneOf(storage.keys ?? 'clear', ['clear', 'digest'], 'storage.keys');
  if (storage.encryption === undefined) return { keyStorage, outcomes: CLEAR_OUTCOMES };
  const keys = storage.encryption?.keys;
  if (!Array.isArray(keys) || keys.length === 0) {
    throw new IdempotencyConfigurationError(
      'option "storage.encryption.keys" must list at least one key ({ id, key }), the newest first',
    );
  }
  const seen = new Set<string>();
  const resolved = keys.map(({ id, key }, index) => {
    const where = `storage.encryption.keys[${index}]`;
    if (typeof id !== 'string' || !KEY_ID.test(id)) {
      throw new IdempotencyConfigurationError(
        `option "${where}.id" must be 1 to 64 printable ASCII characters, got ${describe(id)}`,
      );
    }
    if (seen.has(id))
      throw new IdempotencyConfigurationError(`option "${where}.id" repeats the id '${id}': each key needs its own`);
    seen.add(id);
    const bytes = typeof key === 'string' ? Buffer.from(key, 'base64') : key;
    if (!Buffer.isBuffer(bytes) || bytes.length !== 32) {
      throw new IdempotencyConfigurationError(
        `option "${where}.key" must be 32 bytes (a Buffer, or their base64 text: openssl rand -base64 32), got ${Buffer.isBuffer(bytes) ? `${bytes.length} bytes` : describe(key)}`,
      );
    }
    return { id, key: Buffer.from(bytes) };
  });
  return { keyStorage, outcomes: new SealedOutcomes(resolved) };
}

/** `redact`, its header names lower-cased and its field paths split. */
export function aRedaction(redact: RedactionOptions = {}): Redaction {
  const headers = redact.headers ?? [];
  const body = redact.body ?? [];
  if (
    !Array.isArray(headers) ||
    !headers.every((name) => typeof name === 'string' && /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name))
  ) {
    throw new IdempotencyConfigurationError(
      `option "redact.headers" must be a list of header names, got ${describe(headers)}`,
    );
  }
  if (
    !Array.isArray(body) ||
    !body.every((path) => typeof path === 'string' && path.split('.').every((part) => part !== ''))
  ) {
    throw new IdempotencyConfigurationError(
      `option "redact.body" must be a list of body field paths (['card.number']), got ${describe(body)}`,
    );
  }
  return { headers: new Set(headers.map((name) => name.toLowerCase())), body: body.map((path) => path.split('.')) };
}

/** An option's value as a configuration error quotes it. */
export function describe(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`;
  if (Array.isArray(value) || Object.getPrototypeOf(value ?? 0) === Object.prototype) return JSON.stringify(value);
  return String(value);
}
