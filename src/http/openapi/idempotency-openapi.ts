import { PROBLEM_CONTENT_TYPE, ProblemType } from '../problems/problems.js';

/** What a route publishes of its key policy: the accepted format in words, and how long a key is kept. */
export interface KeyPolicy {
  readonly keyFormatText: string;
  readonly ttlMs: number;
  /** How long after its request a key is kept as a tombstone, if it is. */
  readonly tombstoneMs?: number;
}

/**
 * The `Idempotency-Key` request header (or the route's own key header: `name`), as an OpenAPI parameter (without `in`, as `@ApiHeader()`
 * takes it); with the route's key policy, its format and how long a key is kept.
 */
export function keyHeader(required: boolean, policy?: KeyPolicy, name = 'Idempotency-Key') {
  const description = policy
    ? `A unique key for this operation (${policy.keyFormatText}), the same on every retry. A retry of a completed ` +
      'request gets the first answer again, byte for byte, with `Idempotent-Replayed: true`. A key is kept for ' +
      (policy.tombstoneMs === undefined
        ? `${spelledDuration(policy.ttlMs)} after its request; a request with it after that runs as a new one.`
        : `${spelledDuration(policy.ttlMs)} after its request with its answer, then without it until ` +
          `${spelledDuration(policy.tombstoneMs)} after its request (a retry meanwhile runs nothing and is answered ` +
          'that the key expired); a request with it after that runs as a new one.')
    : 'A unique key for this operation, the same on every retry. A retry of a completed request gets the first ' +
      'answer again, byte for byte, with `Idempotent-Replayed: true`.';
  return {
    name,
    required,
    description,
    schema: { type: 'string' as const, minLength: 1, maxLength: 255 },
  };
}

const UNITS: readonly [ms: number, name: string][] = [
  [86_400_000, 'day'],
  [3_600_000, 'hour'],
  [60_000, 'minute'],
  [1_000, 'second'],
];

/** `ms` in the largest unit that divides it (`86400000`: `24 hours` reads worse than `1 day`). */
function spelledDuration(ms: number): string {
  const [unit, name] = UNITS.find(([unit]) => ms % unit === 0) ?? [1, 'millisecond'];
  const count = ms / unit;
  return `${count} ${name}${count === 1 ? '' : 's'}`;
}

/** The header a replay carries (`REPLAYED_HEADER`), on a success response. */
export const REPLAYED_RESPONSE_HEADER = {
  description:
    'Present, with the value `true`, when this answer is the replay of an earlier request with the same Idempotency-Key.',
  schema: { type: 'string', enum: ['true'] },
};

/** The header that tells when the key expires (`KEY_EXPIRES_HEADER`), on a keyed answer of a route with `expiryHeader`. */
export const KEY_EXPIRES_RESPONSE_HEADER = {
  description:
    'When the Idempotency-Key of this request expires (an HTTP-date): until then a retry with it gets this answer ' +
    "(or, past the response's own retention, that the key completed); after it, a request with the key runs as a new one.",
  schema: { type: 'string' },
};

/** The 410 of a route that keeps tombstones: a retry after its key's ttl, which ran nothing. */
export const KEY_EXPIRED_RESPONSE: ProblemResponse = [
  410,
  "This Idempotency-Key completed longer ago than its response is kept: nothing ran; the problem's `completedAt`, `responseExpiredAt`, `keyExpiresAt` and `recordedStatus` say when and how it completed.",
  [ProblemType.KeyExpired],
  undefined,
  {
    completedAt: { type: 'string', format: 'date-time' },
    responseExpiredAt: { type: 'string', format: 'date-time' },
    keyExpiresAt: { type: 'string', format: 'date-time' },
    recordedStatus: { type: 'integer' },
  },
];

const RETRY_AFTER = {
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 1 } },
};

/** A status the module answers with, its description, its problem types, its headers. */
export type ProblemResponse = [
  status: number,
  description: string,
  types: ProblemType[],
  headers?: object,
  /** The problem type's own members, as schema properties. */
  members?: Record<string, object>,
];

/** Every answer the module adds to an `@Idempotent()` route, as `application/problem+json`. */
export const PROBLEM_RESPONSES: readonly ProblemResponse[] = [
  [400, 'The Idempotency-Key header is missing or malformed.', [ProblemType.KeyMissing, ProblemType.KeyMalformed]],
  [
    409,
    'A request with this Idempotency-Key is still running: retry after `Retry-After` seconds.',
    [ProblemType.KeyInUse],
    RETRY_AFTER,
  ],
  [422, 'This Idempotency-Key was used with a different request payload.', [ProblemType.KeyReused]],
  [
    503,
    'The idempotency store is unavailable, or a recorded outcome cannot be read back; nothing was kept or run: retry after `Retry-After` seconds with the same key.',
    [ProblemType.StoreUnavailable, ProblemType.OutcomeUnreadable],
    RETRY_AFTER,
  ],
];

/** The OpenAPI response of a problem the route does not document itself. */
export function problemResponse([status, description, types, headers, members]: ProblemResponse): object {
  return {
    description,
    content: {
      [PROBLEM_CONTENT_TYPE]: {
        schema: {
          type: 'object',
          required: ['type', 'title', 'status', 'detail'],
          properties: {
            type: { type: 'string', enum: types },
            title: { type: 'string' },
            status: { type: 'integer', enum: [status] },
            detail: { type: 'string' },
            ...members,
          },
        },
      },
    },
    ...(headers && { headers }),
  };
}

/** A response the route documents itself, with the module's description of the same status added. */
export function withModuleDescription<T extends { description?: string }>(documented: T, description: string): T {
  if (documented.description?.includes(description)) return documented;
  return { ...documented, description: [documented.description, description].filter(Boolean).join('\n\n') };
}
