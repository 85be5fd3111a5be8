import { hash } from 'node:crypto';
import { types } from 'node:util';

/**
 * How a route fingerprints its requests:
 * - omitted: the whole JSON body plus the query string;
 * - a list of body field paths (`['amount', 'payer.id']`): only those fields plus the query;
 * - a function: its return value alone (canonicalised) is the fingerprint input.
 */
export type FingerprintOption = readonly string[] | ((request: FingerprintRequest) => unknown);

/** What a fingerprint function is given. */
export interface FingerprintRequest {
  body: unknown;
  query: string;
  headers: Record<string, string | string[] | undefined>;
}

/** How deep a fingerprinted body may nest; deeper bodies are refused (400) before anything runs. */
export const MAX_BODY_DEPTH = 128;

/**
 * What a number JSON cannot hold (`1e999` parses to `Infinity`) is written as, instead of the
 * `null` JSON.stringify writes: a string no request sends, so it fingerprints apart from `null`
 * and from every string. A string that starts with this prefix gets it once more, so that no
 * string can be written like a non-finite number.
 */
const NOT_FINITE = '\u0000nestjs-pg-idempotency:number:';

/**
 * JSON text of `value` with every object's keys sorted, so key order never matters. Objects are
 * rebuilt without a prototype, so a `"__proto__"` member stays a member. Numbers JSON cannot
 * hold are written apart from `null` (see `NOT_FINITE`); everything else is written exactly as
 * JSON.stringify writes it, so fingerprints recorded before stay valid.
 */
export function canonicalJson(value: unknown): string {
  return plainJson(value ?? null, 0) ?? replacedJson(value);
}

/** `canonicalJson` through JSON.stringify's replacer: the definition, for any value. */
function replacedJson(value: unknown): string {
  return (
    JSON.stringify(value ?? null, (_key, item: unknown) => {
      if (typeof item === 'number') return Number.isFinite(item) ? item : `${NOT_FINITE}${item}`;
      if (typeof item === 'string') return item.startsWith(NOT_FINITE) ? `${NOT_FINITE}${item}` : item;
      if (item === null || typeof item !== 'object' || Array.isArray(item)) return item;
      const sorted: Record<string, unknown> = Object.create(null);
      for (const name of Object.keys(item).sort()) sorted[name] = (item as Record<string, unknown>)[name];
      return sorted;
    }) ?? 'null'
  );
}

/**
 * `replacedJson(value)` written directly, for what a JSON body is made of (plain objects and
 * arrays, strings, numbers, booleans, null, no deeper than `MAX_BODY_DEPTH`); `undefined` for
 * anything else (a Date, a class instance, a function, a bigint, an object or array with a
 * `toJSON` method, a proxy), which `replacedJson` writes.
 * The rebuilt object's key order is kept: array-index keys first, in numeric order, then the
 * others sorted.
 */
function plainJson(value: unknown, depth: number): string | undefined {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value.startsWith(NOT_FINITE) ? `${NOT_FINITE}${value}` : value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : JSON.stringify(`${NOT_FINITE}${value}`);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    default:
      return undefined;
  }
  if (value === null) return 'null';
  // JSON.stringify calls a `toJSON` found anywhere on the value (inherited, not enumerable, an
  // array's); a proxy may list its keys in any order.
  if (depth >= MAX_BODY_DEPTH || isProxy(value) || typeof (value as { toJSON?: unknown }).toJSON === 'function')
    return undefined;
  const prototype = Object.getPrototypeOf(value);
  if (Array.isArray(value)) {
    if (prototype !== Array.prototype) return undefined;
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const written = item === undefined ? 'null' : plainJson(item, depth + 1);
      if (written === undefined) return undefined;
      out += i === 0 ? written : `,${written}`;
    }
    return `${out}]`;
  }
  if (prototype !== Object.prototype && prototype !== null) return undefined;
  const names = Object.keys(value);
  let indexes = 0;
  while (indexes < names.length && isArrayIndex(names[indexes])) indexes++;
  const ordered = indexes === 0 ? names.sort() : [...names.slice(0, indexes), ...names.slice(indexes).sort()];
  let out = '{';
  let first = true;
  for (const name of ordered) {
    const item: unknown = (value as Record<string, unknown>)[name];
    if (item === undefined) continue;
    const written = plainJson(item, depth + 1);
    if (written === undefined) return undefined;
    out += `${first ? '' : ','}${JSON.stringify(name)}:${written}`;
    first = false;
  }
  return `${out}}`;
}

const { isProxy } = types;

/** Whether `name` is an array index (`0` … `4294967294` written canonically), which objects list first. */
function isArrayIndex(name: string): boolean {
  return /^(?:0|[1-9][0-9]*)$/.test(name) && Number(name) <= 4_294_967_294;
}

/** Whether `value` nests objects/arrays deeper than `limit` (checked without recursion). */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== 'object') continue;
    if (depth >= limit) return true;
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return false;
}

/** The SHA-256 fingerprint of a request under a route's fingerprint option. */
export function fingerprintRequest(request: FingerprintRequest, option?: FingerprintOption): Buffer {
  const input =
    typeof option === 'function'
      ? option(request)
      : { body: option ? pick(request.body, option) : request.body, query: canonicalQuery(request.query) };
  return hash('sha256', canonicalJson(input), 'buffer');
}

/**
 * The query string as name/value pairs sorted by name, so the order of different parameters does
 * not matter; the values of a repeated parameter keep their order (`?item=a&item=b` is a list,
 * and `?item=b&item=a` another). The sort is stable.
 */
function canonicalQuery(query: string): string[][] {
  if (query.startsWith('?')) query = query.slice(1);
  if (query === '') return [];
  const pairs: string[][] = [];
  for (const pair of query.split('&')) {
    if (pair === '') continue;
    const at = pair.indexOf('=');
    pairs.push(at < 0 ? [queryPart(pair), ''] : [queryPart(pair.slice(0, at)), queryPart(pair.slice(at + 1))]);
  }
  return pairs.sort(([a], [b]) => cmp(a, b));
}

/**
 * A name or value of the query string, decoded as `URLSearchParams` decodes it (`+` is a space;
 * `%XX` a byte, a `%` without two hex digits itself; the bytes read as UTF-8), except when those
 * bytes are not UTF-8 (`%E9`): such a part is kept as sent, as Fastify's and qs's parsers hand it
 * to the handler, so that `?payee=Ren%E9` and `?payee=Ren%EA` are two fingerprints (decoding would
 * make both U+FFFD).
 */
function queryPart(text: string): string {
  const spaced = text.includes('+') ? text.replace(/\+/g, ' ') : text;
  if (!spaced.includes('%')) return spaced;
  const bytes = percentDecoded(Buffer.from(spaced, 'utf8'));
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return spaced;
  }
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The WHATWG percent-decoding of `bytes`: `%` and two hex digits is that byte, anything else itself. */
function percentDecoded(bytes: Buffer): Buffer {
  const out = Buffer.allocUnsafe(bytes.length);
  let length = 0;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (byte === 0x25 && isHex(bytes[i + 1]) && isHex(bytes[i + 2])) {
      out[length++] = parseInt(String.fromCharCode(bytes[i + 1], bytes[i + 2]), 16);
      i += 2;
    } else {
      out[length++] = byte;
    }
  }
  return out.subarray(0, length);
}

function isHex(byte: number | undefined): boolean {
  return (
    byte !== undefined &&
    ((byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66))
  );
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function pick(body: unknown, paths: readonly string[]): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const path of paths) picked[path] = fieldAt(body, path) ?? null;
  return picked;
}

/** The value at a dotted field path of a parsed JSON body (`'data.object.id'`), or `undefined`. */
export function fieldAt(body: unknown, path: string): unknown {
  let value: unknown = body;
  for (const part of path.split('.')) {
    value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined;
  }
  return value;
}
