import { IdempotencyConfigurationError } from '../idempotency.errors.js';

/** How a `Date` and a `bigint` are kept in a mutation's recorded value (an object with this one key). */
const DATE = '$nestjs-pg-idempotency:date';
const BIGINT = '$nestjs-pg-idempotency:bigint';

/**
 * A mutation's value as it is recorded: its data as JSON keeps it (own enumerable properties,
 * `toJSON()` applied, functions and `undefined` left out), with a `Date` and a `bigint` kept as
 * themselves, which GraphQL's `DateTime`, `Timestamp` and big-integer scalars need back. A value
 * that holds itself (a cycle) cannot be recorded: an `IdempotencyConfigurationError`.
 */
export function recordable(value: unknown, path: object[] = []): unknown {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : { [DATE]: value.toISOString() };
  if (typeof value === 'bigint') return { [BIGINT]: value.toString() };
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value !== 'object') return null;
  if (path.includes(value))
    throw new IdempotencyConfigurationError(
      "a GraphQL mutation's result holds a cycle, and is recorded as data: return the data the mutation answers with",
    );
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') return recordable(toJSON.call(value), [...path, value]);
  const inside = [...path, value];
  if (Array.isArray(value)) return value.map((item) => recordable(item, inside));
  const copy: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(value)) {
    if (field === undefined || typeof field === 'function' || typeof field === 'symbol') continue;
    copy[name] = recordable(field, inside);
  }
  return copy;
}

/** The value a recorded one stands for: its `Date`s and `bigint`s back. */
export function revived(recorded: unknown): unknown {
  if (recorded === null || typeof recorded !== 'object') return recorded;
  if (Array.isArray(recorded)) return recorded.map(revived);
  const fields = Object.keys(recorded);
  if (fields.length === 1 && fields[0] === DATE) return new Date((recorded as Record<string, string>)[DATE]);
  if (fields.length === 1 && fields[0] === BIGINT) return BigInt((recorded as Record<string, string>)[BIGINT]);
  const copy: Record<string, unknown> = {};
  for (const name of fields) copy[name] = revived((recorded as Record<string, unknown>)[name]);
  return copy;
}
