import type { AcceptedKeys } from './key-format.js';
import type { KeyRefusal } from './key-header.js';
import { MAX_KEY_LENGTH } from './key-limits.js';

/** Printable ASCII, the characters a key holds. */
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;

/**
 * The key a value holds (a body field, an argument, what a function returned): `undefined` for
 * none (`undefined`, `null`); a string of printable ASCII or a finite number (as its text) that
 * the accepted keys take; anything else, an empty string included (a key meant and left blank,
 * as an empty header is), throws the entry's error for the reason (`refuse`).
 */
export function keyOfValue(value: unknown, keys: AcceptedKeys, refuse: (why: KeyRefusal) => Error): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === '') throw refuse('empty');
  const key = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  if (typeof key !== 'string' || !PRINTABLE_ASCII.test(key)) throw refuse('not-text');
  if (key.length > MAX_KEY_LENGTH) throw refuse('too-long');
  if (!keys.accepts(key)) throw refuse('format');
  return key;
}
