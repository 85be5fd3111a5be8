/**
 * Which keys a route accepts, checked after unquoting:
 * - `'uuid-or-ulid'` (default): a UUID of any version (v7 included) or a ULID;
 * - `'printable-ascii'`: any printable ASCII characters (space to `~`);
 * - a `RegExp` the whole key must match, or a predicate.
 */
export type KeyFormat = 'uuid-or-ulid' | 'printable-ascii' | RegExp | ((key: string) => boolean);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/i;
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;

/** The format in words, for a client told its key was refused and for the published API. */
function describeKeyFormat(format: KeyFormat): string {
  if (format === 'uuid-or-ulid') return 'a UUID or a ULID';
  if (format === 'printable-ascii') return 'printable ASCII characters';
  if (format instanceof RegExp) return `printable ASCII characters matching /${format.source}/`;
  return 'printable ASCII characters in the format this operation documents';
}

/** A route's key format, resolved: the check of a key (unquoted), and the format in words. */
export interface AcceptedKeys {
  accepts(key: string): boolean;
  /** `describeKeyFormat`'s words. */
  readonly text: string;
}

/** The format as a route applies it: its check and its words, from the one option. */
export function acceptedKeys(format: KeyFormat): AcceptedKeys {
  return { accepts: keyFormatPredicate(format), text: describeKeyFormat(format) };
}

function keyFormatPredicate(format: KeyFormat): (key: string) => boolean {
  if (format === 'uuid-or-ulid') return (key) => UUID.test(key) || ULID.test(key);
  if (format === 'printable-ascii') return (key) => PRINTABLE_ASCII.test(key);
  if (format instanceof RegExp) {
    const anchored = new RegExp(`^(?:${format.source})$`, format.flags.replace(/[gy]/g, ''));
    return (key) => PRINTABLE_ASCII.test(key) && anchored.test(key);
  }
  return (key) => PRINTABLE_ASCII.test(key) && format(key) === true;
}
