import { IdempotencyConfigurationError } from '../../idempotency.errors.js';
import { fieldAt } from '../../key/fingerprint.js';
import type { AcceptedKeys } from '../../key/key-format.js';
import { keyOfValue } from '../../key/key-value.js';
import { describe } from '../../options/checks.js';
import type { KeySource } from '../../options/route-options.js';
import { Problems } from '../problems/problems.js';
import {
  IDEMPOTENCY_KEY_HEADER,
  isHeaderName,
  type KeyHeader,
  type KeyRefusal,
  readKeyHeader,
} from '../../key/key-header.js';

/**
 * A route's key source, checked at bootstrap, with how its problems name the key (`noun`) and what
 * a request without one is asked to send (`ask`).
 */
export type RouteKeySource = (
  | HeaderSource
  | { readonly kind: 'body'; readonly path: string }
  | { readonly kind: 'function'; readonly read: (request: any) => unknown }
) & {
  readonly noun: string;
  readonly ask: string;
};

interface HeaderSource {
  readonly kind: 'header';
  readonly name: string;
  readonly lowerName: string;
}

/** The source of a route whose options name none: the `Idempotency-Key` header. */
const DEFAULT_SOURCE: HeaderSource & RouteKeySource = {
  kind: 'header',
  ...IDEMPOTENCY_KEY_HEADER,
  noun: IDEMPOTENCY_KEY_HEADER.name,
  ask: `send an ${IDEMPOTENCY_KEY_HEADER.name} header`,
};

/** The source `keyFrom` names, or a configuration error that says what it must be. */
export function aKeySource(value: KeySource | undefined): RouteKeySource {
  if (value === undefined) return DEFAULT_SOURCE;
  if (typeof value === 'function')
    return {
      kind: 'function',
      read: value,
      noun: 'idempotency key',
      ask: 'send the idempotency key this operation documents',
    };
  if (typeof value === 'object' && value !== null && Object.keys(value).length === 1) {
    const { header, body, argument } = value as { header?: unknown; body?: unknown; argument?: unknown };
    if (argument !== undefined)
      throw new IdempotencyConfigurationError(
        'option "keyFrom": { argument } is for GraphQL mutations; an HTTP route reads its key from a header, a body field or a function',
      );
    if (typeof header === 'string' && isHeaderName(header)) {
      if (header.toLowerCase() === DEFAULT_SOURCE.lowerName) return DEFAULT_SOURCE;
      return {
        kind: 'header',
        name: header,
        lowerName: header.toLowerCase(),
        noun: header,
        ask: `send the ${header} header`,
      };
    }
    if (typeof body === 'string' && body.split('.').every((part) => part !== '')) {
      const noun = `key in the body field "${body}"`;
      return { kind: 'body', path: body, noun, ask: `send the ${noun}` };
    }
  }
  throw new IdempotencyConfigurationError(
    `option "keyFrom" must be { header: 'Header-Name' }, { body: 'field.path' } or a function of the request, got ${describe(value)}`,
  );
}

/**
 * Reads the `Idempotency-Key` value (or another key header's: `header`), as `readKeyHeader` does;
 * a key it refuses is a 400 problem that names the header.
 */
export function parseIdempotencyKey(
  rawHeaders: readonly string[],
  keys: AcceptedKeys,
  header: KeyHeader = IDEMPOTENCY_KEY_HEADER,
): string | undefined {
  return readKeyHeader(rawHeaders, keys, header, refusal(header.name, keys));
}

/** The 400 problem that refuses a key the route names `noun`. */
const refusal =
  (noun: string, keys: AcceptedKeys) =>
  (why: KeyRefusal): Error =>
    why === 'format' ? Problems.keyFormat(keys.text, noun) : Problems.keyMalformed(why, noun);

/**
 * The key of a request from the route's source: `undefined` when the request has none; a 400
 * problem naming the source when what it holds is not a key the route accepts.
 */
export function readKey(
  source: RouteKeySource,
  request: { body?: unknown },
  rawHeaders: readonly string[],
  keys: AcceptedKeys,
): string | undefined {
  if (source.kind === 'header') return parseIdempotencyKey(rawHeaders, keys, source);
  const value = source.kind === 'body' ? fieldAt(request.body, source.path) : source.read(request);
  return keyOfValue(value, keys, refusal(source.noun, keys));
}
