import { parseIdempotencyKey } from '../../src/http/parse/key-source.js';
import { acceptedKeys, type KeyFormat } from '../../src/key/key-format.js';
import { IdempotencyProblem, ProblemType } from '../../src/http/problems/problems.js';

const UUID = '8e03978e-40d5-43e8-bc93-6894a57f9324';
const UUID_V7 = '01932c07-209c-7a87-9a43-1e5d2b7c3f10';
const ULID = '01ARZ3NDEKTSV4RRFFQ69G5FAV';
const parse = (values: string[], format: KeyFormat = 'uuid-or-ulid') =>
  parseIdempotencyKey(
    values.flatMap((value) => ['Idempotency-Key', value]),
    acceptedKeys(format),
  );

function rejection(values: string[], format?: KeyFormat): IdempotencyProblem {
  try {
    parse(values, format);
  } catch (error) {
    if (error instanceof IdempotencyProblem) return error;
    throw error;
  }
  throw new Error(`accepted ${JSON.stringify(values)}`);
}

describe('parseIdempotencyKey', () => {
  it('returns undefined when the header is absent', () => {
    expect(parseIdempotencyKey(['Content-Type', 'application/json'], acceptedKeys('uuid-or-ulid'))).toBeUndefined();
  });

  it.each([UUID, UUID.toUpperCase(), UUID_V7, ULID])('accepts %s bare and as an RFC 8941 sf-string', (key) => {
    expect(parse([key])).toBe(key);
    expect(parse([`"${key}"`])).toBe(key);
  });

  it('ignores RFC 8941 parameters after a quoted key', () => {
    expect(parse([`"${UUID}";v=1`])).toBe(UUID);
    expect(parse([`"${UUID}";a;b="x;y"`])).toBe(UUID);
    expect(rejection([`"${UUID}";V=1`]).getStatus()).toBe(400);
  });

  it('matches the header name case-insensitively', () => {
    expect(parseIdempotencyKey(['idempotency-KEY', UUID], acceptedKeys('uuid-or-ulid'))).toBe(UUID);
  });

  it.each([
    ['empty', [''], 'empty'],
    ['empty quoted', ['""'], 'empty'],
    ['not a UUID or ULID', ['order-1'], 'format'],
    ['several header lines', [UUID, UUID], 'several'],
    ['an sf-list', [`"${UUID}", "${UUID}"`], 'several'],
    ['a comma list', [`${UUID}, ${UUID}`], 'single token'],
    ['an unterminated quote', [`"${UUID}`], 'closing quote'],
    ['a bad escape', ['"a\\nb"'], 'escape'],
  ])('rejects %s with a 400 key-malformed problem', (_case, values, detail) => {
    const problem = rejection(values);
    expect(problem.getStatus()).toBe(400);
    expect(problem.problem.type).toBe(ProblemType.KeyMalformed);
    expect(problem.problem.detail).toContain(detail);
  });

  it('takes up to 255 characters after unquoting, and unescapes sf-string escapes', () => {
    expect(parse(['k'.repeat(255)], 'printable-ascii')).toHaveLength(255);
    expect(parse([`"${'k'.repeat(253)}\\"\\\\"`], 'printable-ascii')).toBe(`${'k'.repeat(253)}"\\`);
    expect(rejection(['k'.repeat(256)], 'printable-ascii').problem.detail).toContain('255');
  });

  it('applies RegExp and predicate formats to the whole key', () => {
    expect(parse(['ord_123'], /ord_\d+/)).toBe('ord_123');
    expect(rejection(['xord_123'], /ord_\d+/).getStatus()).toBe(400);
    expect(parse(['abc'], (key) => key.length === 3)).toBe('abc');
    expect(rejection(['abcd'], (key) => key.length === 3).getStatus()).toBe(400);
  });

  it("names the route's own format when it refuses a key, not the default's", () => {
    expect(rejection(['order-1']).problem.detail).toBe(
      'the Idempotency-Key does not have the accepted format (a UUID or a ULID)',
    );
    expect(rejection(['xord_123'], /ord_\d+/).problem.detail).toBe(
      'the Idempotency-Key does not have the accepted format (printable ASCII characters matching /ord_\\d+/)',
    );
    expect(rejection(['abcd'], (key) => key.length === 3).problem.detail).toContain(
      'printable ASCII characters in the format this operation documents',
    );
  });
});
