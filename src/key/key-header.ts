import type { AcceptedKeys } from '../../key/key-format.js';
import { MAX_KEY_LENGTH } from '../../key/key-limits.js';
import { Problems } from '../problems.js';

/** RFC 8941 parameters after an sf-string (`;name` or `;name=value`): allowed, and ignored. */
const SF_PARAMETERS = /^(?:; *[a-z*][a-z0-9_.*-]*(?:=(?:"(?:[^"\\]|\\.)*"|[^;,\s"]+))?)+$/;

/** The header a key is read from: its name as problems say it, and in lower case. */
export interface KeyHeader {
  readonly name: string;
  readonly lowerName: string;
}

/** The header a route reads its key from unless its `keyFrom` names another source. */
export const IDEMPOTENCY_KEY_HEADER: KeyHeader = { name: 'Idempotency-Key', lowerName: 'idempotency-key' };

/**
 * Reads the `Idempotency-Key` value (or another key header's: `header`) as an RFC 8941 sf-string
 * (`"abc"`, parameters such as `"abc";v=1` ignored) or as the bare form most clients send (`abc`);
 * both name the same key. Returns `undefined` when the header is absent.
 * Several header lines, an sf-list, bad quoting, an empty or over-long key, or a key outside
 * the accepted format throw a 400 problem.
 */
export function parseIdempotencyKey(
  rawHeaders: readonly string[],
  /** The route's accepted keys: the check of an unquoted key, and the format in words for the problem that refuses one. */
  keys: AcceptedKeys,
  header: KeyHeader = IDEMPOTENCY_KEY_HEADER,
): string | undefined {
  const { name, lowerName } = header;
  const values: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i].length === lowerName.length && rawHeaders[i].toLowerCase() === lowerName)
      values.push(rawHeaders[i + 1]);
  }
  if (values.length === 0) return undefined;
  if (values.length > 1) throw Problems.keyMalformed('several-headers', name);
  // Only the header's own whitespace (space, tab) around it: trim() would also take a 0xA0 byte
  // (read as U+00A0), which is not whitespace in HTTP and not part of any valid key.
  const value = values[0].replace(/^[ \t]+|[ \t]+$/g, '');
  const key = value.startsWith('"') ? unquote(value, name) : value;
  if (key.length === 0) throw Problems.keyMalformed('empty', name);
  if (key.length > MAX_KEY_LENGTH) {
    throw Problems.keyMalformed('too-long', name);
  }
  if (!value.startsWith('"') && !/^[\x21-\x7e]+$/.test(key)) {
    throw Problems.keyMalformed('not-a-token', name);
  }
  // A list (`a,b`: two header lines a proxy joined) is several keys, not one; a key holding a
  // comma can be sent quoted.
  if (!value.startsWith('"') && key.includes(',')) throw Problems.keyMalformed('several-values', name);
  if (!keys.accepts(key)) {
    throw Problems.keyFormat(keys.text, name);
  }
  return key;
}

function unquote(value: string, name: string): string {
  let key = '';
  for (let i = 1; i < value.length; i++) {
    const char = value[i];
    if (char === '\\') {
      const next = value[i + 1];
      if (next !== '"' && next !== '\\') throw Problems.keyMalformed('bad-escape', name);
      key += next;
      i++;
    } else if (char === '"') {
      const rest = value.slice(i + 1);
      if (rest !== '' && !SF_PARAMETERS.test(rest)) throw Problems.keyMalformed('several-values', name);
      return key;
    } else if (char < ' ' || char > '~') {
      throw Problems.keyMalformed('not-printable', name);
    } else {
      key += char;
    }
  }
  throw Problems.keyMalformed('unterminated', name);
}
