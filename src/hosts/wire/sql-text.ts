import type { SqlStatement } from '../database-host.js';

/** Quotes text for SQL as node-postgres does (`Client#escapeLiteral`). */
export interface LiteralQuoting {
  escapeLiteral(value: string): string;
}

/** Strings with neither a quote nor a backslash: quoted as they are (escapeLiteral's own result). */
const PLAIN = /^[^'\\]*$/;

/**
 * A value as an SQL literal, for a message sent with the simple protocol (which takes no bind
 * parameters): strings through the driver's `escapeLiteral`, bytes as `decode('<hex>', 'hex')`,
 * integers as digits, arrays of those as `ARRAY[…]` (the statement casts it; an empty one is
 * `'{}'`); nothing else is accepted.
 */
export function literal(value: unknown, quoting: LiteralQuoting): string {
  if (value === null || value === undefined) return 'NULL';
  if (Buffer.isBuffer(value)) return `decode('${value.toString('hex')}', 'hex')`;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  if (typeof value === 'string') return PLAIN.test(value) ? `'${value}'` : quoting.escapeLiteral(value);
  if (Array.isArray(value))
    return value.length === 0 ? `'{}'` : `ARRAY[${value.map((element) => literal(element, quoting)).join(', ')}]`;
  throw new TypeError(`nestjs-pg-idempotency: cannot inline a ${typeof value} into SQL`);
}

/** The statement's text with its parameters inlined as literals. */
export function wholeText(statement: SqlStatement, params: readonly unknown[], quoting: LiteralQuoting): string {
  return statement.text.replace(/\$(\d+)/g, (_placeholder, index: string) =>
    literal(params[Number(index) - 1], quoting),
  );
}

/** `EXECUTE name (literals…)` of a prepared statement; an array is cast to its parameter's type. */
export function executeText(statement: SqlStatement, params: readonly unknown[], quoting: LiteralQuoting): string {
  const literals = params.map((param, index) =>
    Array.isArray(param) ? `${literal(param, quoting)}::${statement.types[index]}` : literal(param, quoting),
  );
  return `EXECUTE ${statement.name} (${literals.join(', ')})`;
}

/** `PREPARE name (types) AS text`. */
export function prepareText(statement: SqlStatement): string {
  return `PREPARE ${statement.name} (${statement.types.join(', ')}) AS ${statement.text}`;
}
