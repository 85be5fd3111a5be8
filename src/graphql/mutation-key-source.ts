import { IdempotencyConfigurationError } from '../idempotency.errors.js';
import { fieldAt } from '../key/fingerprint.js';
import type { AcceptedKeys } from '../key/key-format.js';
import {
  IDEMPOTENCY_KEY_HEADER,
  isHeaderName,
  type KeyHeader,
  type KeyRefusal,
  readKeyHeader,
  refusalText,
} from '../key/key-header.js';
import { keyOfValue } from '../key/key-value.js';
import { describe } from '../options/checks.js';
import type { KeySource } from '../options/route-options.js';
import { IdempotentMutationError } from './mutation-error.js';

/** Where a mutation reads its key, checked at bootstrap, with how its errors name the key (`noun`). */
export type MutationKeySource = (
  ({ readonly kind: 'header' } & KeyHeader) | { readonly kind: 'argument'; readonly path: string }
) & { readonly noun: string };

const DEFAULT_SOURCE: MutationKeySource = {
  kind: 'header',
  ...IDEMPOTENCY_KEY_HEADER,
  noun: IDEMPOTENCY_KEY_HEADER.name,
};

/** The source `keyFrom` names for a mutation: a header, or an argument by dotted path. */
export function aMutationKeySource(value: KeySource | undefined): MutationKeySource {
  if (value === undefined) return DEFAULT_SOURCE;
  if (typeof value === 'object' && value !== null && Object.keys(value).length === 1) {
    const { header, argument } = value as { header?: unknown; argument?: unknown };
    if (typeof header === 'string' && isHeaderName(header))
      return { kind: 'header', name: header, lowerName: header.toLowerCase(), noun: header };
    if (typeof argument === 'string' && argument.split('.').every((part) => part !== ''))
      return { kind: 'argument', path: argument, noun: `key in the argument "${argument}"` };
  }
  throw new IdempotencyConfigurationError(
    `option "keyFrom" of a mutation must be { header: 'Header-Name' } or { argument: 'name' } (a dotted path into its arguments), got ${describe(value)}`,
  );
}

/**
 * The mutation's key from its source: `undefined` when the request has none; an
 * `IDEMPOTENCY_KEY_INVALID` error naming the source when what it holds is not a key it accepts.
 */
export function readMutationKey(
  source: MutationKeySource,
  args: unknown,
  request: { raw?: { rawHeaders?: string[] }; rawHeaders?: string[] } | undefined,
  keys: AcceptedKeys,
): string | undefined {
  const refuse = (why: KeyRefusal) =>
    new IdempotentMutationError('IDEMPOTENCY_KEY_INVALID', refusalText(why, source.noun, keys.text));
  if (source.kind === 'header') {
    const rawHeaders = request?.raw?.rawHeaders ?? request?.rawHeaders ?? [];
    return readKeyHeader(rawHeaders, keys, source, refuse);
  }
  return keyOfValue(fieldAt(args, source.path), keys, refuse);
}
