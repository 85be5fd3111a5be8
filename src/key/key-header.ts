import type { AcceptedKeys } from './key-format.js';
import { MAX_KEY_LENGTH } from './key-limits.js';

/** RFC 8941 parameters after an sf-string (`;name` or `;name=value`): allowed, and ignored. */
const SF_PARAMETERS = /^(?:; *[a-z*][a-z0-9_.*-]*(?:=(?:"(?:[^"\\]|\\.)*"|[^;,\s"]+))?)+$/;

/**
 * Why a key was refused, of a key the entry names `noun` (`Idempotency-Key`; another header's
 * name; `key in the body field "id"`; `key in the argument "input.key"`), in words every entry
 * uses: an HTTP problem's detail, a GraphQL error's message.
 */
export const MALFORMED_KEY = {
  'several-headers': (noun: string) => `several ${noun} headers were sent; send one`,
  'several-values': (noun: string) => `several ${noun} values were sent; send one`,
  empty: (noun: string) => `the ${noun} is empty`,
  'too-long': (noun: string) => `the ${noun} is longer than 255 characters`,
  'not-a-token': (noun: string) => `the ${noun} must be a single token or an RFC 8941 quoted string`,
  'bad-escape': (noun: string) => `invalid escape in the quoted ${noun}`,
  'not-printable': (noun: string) => `the quoted ${noun} holds a character outside printable ASCII`,
  unterminated: (noun: string) => `the quoted ${noun} has no closing quote`,
  'not-text': (noun: string) => `the ${noun} must be printable ASCII text or a number`,
} as const;

export type MalformedKey = keyof typeof MALFORMED_KEY;

/** Why a key was refused: malformed, or outside the accepted format (`'format'`). */
export type KeyRefusal = MalformedKey | 'format';

/** The words of a refusal; `format` is the accepted format in words. */
export function refusalText(why: KeyRefusal, noun: string, format: string): string {
  return why === 'format' ? `the ${noun} does not have the accepted format (${format})` : MALFORMED_KEY[why](noun);
}

/** An HTTP header name (RFC 9110 §5.1: a token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Whether `name` can name a header (the `keyFrom: { header }` option of every entry). */
export const isHeaderName = (name: string): boolean => HEADER_NAME.test(name);

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
 * the accepted format throw the entry's error for the reason (`refuse`: a 400 problem, a GraphQL error).
 */
export function readKeyHeader(
  rawHeaders: readonly string[],
  /** The accepted keys: the check of an unquoted key. */
  keys: AcceptedKeys,
  header: KeyHeader,
  refuse: (why: KeyRefusal) => Error,
): string | undefined {
  const { lowerName } = header;
  const values: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i].length === lowerName.length && rawHeaders[i].toLowerCase() === lowerName)
      values.push(rawHeaders[i + 1]);
  }
  if (values.length === 0) return undefined;
  if (values.length > 1) throw refuse('several-headers');
  // Only the header's own whitespace (space, tab) around it: trim() would also take a 0xA0 byte
  // (read as U+00A0), which is not whitespace in HTTP and not part of any valid key.
  const value = values[0].replace(/^[ \t]+|[ \t]+$/g, '');
  const key = value.startsWith('"') ? unquote(value, refuse) : value;
  if (key.length === 0) throw refuse('empty');
  if (key.length > MAX_KEY_LENGTH) {
    throw refuse('too-long');
  }
  if (!value.startsWith('"') && !/^[\x21-\x7e]+$/.test(key)) {
    throw refuse('not-a-token');
  }
  // A list (`a,b`: two header lines a proxy joined) is several keys, not one; a key holding a
  // comma can be sent quoted.
  if (!value.startsWith('"') && key.includes(',')) throw refuse('several-values');
  if (!keys.accepts(key)) {
    throw refuse('format');
  }
  return key;
}

function unquote(value: string, refuse: (why: KeyRefusal) => Error): string {
  let key = '';
  for (let i = 1; i < value.length; i++) {
    const char = value[i];
    if (char === '\\') {
      const next = value[i + 1];
      if (next !== '"' && next !== '\\') throw refuse('bad-escape');
      key += next;
      i++;
    } else if (char === '"') {
      const rest = value.slice(i + 1);
      if (rest !== '' && !SF_PARAMETERS.test(rest)) throw refuse('several-values');
      return key;
    } else if (char < ' ' || char > '~') {
      throw refuse('not-printable');
    } else {
      key += char;
    }
  }
  throw refuse('unterminated');
}
