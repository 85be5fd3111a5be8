import { IdempotencyProblem, ProblemType } from '../problems.js';
import type { KeyFormat } from './key-format.js';
import { keyFormatPredicate } from './key-format.js';

/** RFC 8941 parameters after an sf-string (`;name` or `;name=value`): allowed, and ignored. */
const SF_PARAMETERS = /^(?:; *[a-z*][a-z0-9_.*-]*(?:=(?:"(?:[^"\\]|\\.)*"|[^;,\s"]+))?)+$/;

/** The longest key accepted, in characters, after unquoting. */
export const MAX_KEY_LENGTH = 255;

/**
 * Reads the `Idempotency-Key` value as an RFC 8941 sf-string (`"abc"`, parameters such as
 * `"abc";v=1` ignored) or as the bare form most clients send (`abc`); both name the same key. Returns `undefined` when the header is absent.
 * Several header lines, an sf-list, bad quoting, an empty or over-long key, or a key outside
 * the accepted format throw a 400 problem.
 */
export function parseIdempotencyKey(
  rawHeaders: readonly string[],
  format: KeyFormat,
): string | undefined {
  const values: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i].toLowerCase() === 'idempotency-key') values.push(rawHeaders[i + 1]);
  }
  if (values.length === 0) return undefined;
  if (values.length > 1) throw malformed('several Idempotency-Key headers were sent; send one');
  // Only the header's own whitespace (space, tab) around it: trim() would also take a 0xA0 byte
  // (read as U+00A0), which is not whitespace in HTTP and not part of any valid key.
  const value = values[0].replace(/^[ \t]+|[ \t]+$/g, '');
  const key = value.startsWith('"') ? unquote(value) : value;
  if (key.length === 0) throw malformed('the Idempotency-Key header is empty');
  if (key.length > MAX_KEY_LENGTH) {
    throw malformed(`the Idempotency-Key is longer than ${MAX_KEY_LENGTH} characters`);
  }
  if (!value.startsWith('"') && !/^[\x21-\x7e]+$/.test(key)) {
    throw malformed('the Idempotency-Key must be a single token or an RFC 8941 quoted string');
  }
  // A list (`a,b`: two header lines a proxy joined) is several keys, not one; a key holding a
  // comma can be sent quoted.
  if (!value.startsWith('"') && key.includes(',')) throw malformed('several Idempotency-Key values were sent; send one');
  if (!keyFormatPredicate(format)(key)) {
    throw malformed('the Idempotency-Key does not have the accepted format (a UUID or a ULID)');
  }
  return key;
}

function unquote(value: string): string {
  let key = '';
  for (let i = 1; i < value.length; i++) {
    const char = value[i];
    if (char === '\\') {
      const next = value[i + 1];
      if (next !== '"' && next !== '\\') throw malformed('invalid escape in the quoted Idempotency-Key');
      key += next;
      i++;
    } else if (char === '"') {
      const rest = value.slice(i + 1);
      if (rest !== '' && !SF_PARAMETERS.test(rest)) throw malformed('several Idempotency-Key values were sent; send one');
      return key;
    } else if (char < ' ' || char > '~') {
      throw malformed('the quoted Idempotency-Key holds a character outside printable ASCII');
    } else {
      key += char;
    }
  }
  throw malformed('the quoted Idempotency-Key has no closing quote');
}

function malformed(detail: string): IdempotencyProblem {
  return new IdempotencyProblem(ProblemType.KeyMalformed, detail);
}
