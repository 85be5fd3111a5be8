/** What a route's stored outcome leaves out (`@Idempotent({ redact })`), resolved once. */
export interface Redaction {
  /** Lower-case header names. */
  readonly headers: ReadonlySet<string>;
  /** Body field paths, split at their dots. */
  readonly body: readonly (readonly string[])[];
}

const JSON_TYPE = /^application\/(?:[\w.+-]*\+)?json\s*(?:;|$)/i;

/**
 * `stored` without the headers and JSON body fields `redaction` names. A field inside an array
 * is removed from every element. A body that is not JSON (by its `content-type`, or because it
 * does not parse) has no fields, and is kept as it is. A body that lost a field loses its `ETag`.
 */
export function redact<Stored extends { headers: [string, string][]; body: Buffer }>(
  stored: Stored,
  redaction: Redaction,
): Stored {
  const headers =
    redaction.headers.size === 0 ? stored.headers : stored.headers.filter(([name]) => !redaction.headers.has(name));
  if (redaction.body.length === 0) return { ...stored, headers };
  const type = stored.headers.find(([name]) => name === 'content-type')?.[1];
  if (type === undefined || !JSON_TYPE.test(type)) return { ...stored, headers };
  let document: unknown;
  try {
    document = JSON.parse(stored.body.toString('utf8'));
  } catch {
    return { ...stored, headers };
  }
  let removed = false;
  for (const path of redaction.body) removed = removeField(document, path) || removed;
  if (!removed) return { ...stored, headers };
  // An entity tag names the bytes it was computed over: the redacted body is other bytes.
  return {
    ...stored,
    headers: headers.filter(([name]) => name !== 'etag'),
    body: Buffer.from(JSON.stringify(document), 'utf8'),
  };
}

/** Removes the field at `path` from `value` (from each element of an array on the way); whether one was. */
function removeField(value: unknown, path: readonly string[]): boolean {
  if (Array.isArray(value)) return value.reduce<boolean>((removed, item) => removeField(item, path) || removed, false);
  if (value === null || typeof value !== 'object' || path.length === 0) return false;
  const [name, ...rest] = path as [string, ...string[]];
  if (!Object.hasOwn(value, name)) return false;
  if (rest.length === 0) return delete (value as Record<string, unknown>)[name];
  return removeField((value as Record<string, unknown>)[name], rest);
}
