import type { ExecutionContext } from '@nestjs/common';
import { MAX_ENDPOINT_LENGTH } from '../../key/key-limits.js';
import { callerIdOf } from '../../key/caller-id.js';
import type { FingerprintOption } from '../../key/fingerprint.js';
import { Problems } from '../problems/problems.js';
import { fingerprintRequest, MAX_BODY_DEPTH, nestsDeeperThan } from '../../key/fingerprint.js';
import type { AcceptedKeys } from '../../key/key-format.js';
import { readKey, type RouteKeySource } from './key-source.js';
import { routedPath } from './routed-path.js';
import type { IdempotentRequest } from '../../key/idempotent-request.js';
import { buildRequest, isRefusal } from '../../key/request-builder.js';
import type { KeyStorage } from '../../key/scoped-key.js';

/** What reading an HTTP request needs of the module's settings (`IdempotencySettings` has it). */
export interface CallerRules {
  readonly anonymousCallers: 'reject' | 'shared';
  /** How the key's row names it (see the `storage.keys` option). */
  readonly keyStorage: KeyStorage;
}

/** What reading an HTTP request needs of its route's settings (`RouteSettings` has it). */
export interface RouteRules {
  readonly required: boolean;
  /** Where the key is read (see the `keyFrom` option). */
  readonly keySource: RouteKeySource;
  /** The caller's id (see the `caller` option). */
  caller(request: any, context: ExecutionContext): unknown;
  /** The keys the route accepts, and their format in words for the problem that refuses one. */
  readonly keys: AcceptedKeys;
  /** The route's controller names a host: the key's scope includes the request's. */
  readonly scopedByHost: boolean;
  readonly fingerprint?: FingerprintOption;
  readonly ttlMs: number;
  readonly tombstoneMs?: number;
}

/**
 * Reads the key, the scope and the fingerprint of an HTTP request. Returns
 * `undefined` when the key is absent on a route that does not require it; throws a problem for
 * everything a client must fix.
 */
export function readIdempotentRequest(
  context: ExecutionContext,
  settings: CallerRules,
  route: RouteRules,
): IdempotentRequest | undefined {
  const request = context.getArgByIndex(0);
  const incoming = request.raw ?? request;
  const bodyUnread = request.body === undefined && hasBody(incoming);
  if (bodyUnread && route.keySource.kind === 'body') throw Problems.bodyNotParsed();
  const key = readKey(route.keySource, request, incoming.rawHeaders ?? [], route.keys);
  if (key === undefined) {
    if (!route.required) return undefined;
    throw Problems.keyMissing(route.keys.text, route.keySource.ask);
  }
  const url: string = incoming.originalUrl ?? request.originalUrl ?? incoming.url ?? '/';
  const queryStart = url.indexOf('?');
  const sentPath = queryStart < 0 ? url : url.slice(0, queryStart);
  const method = String(request.method).toUpperCase();
  const host = route.scopedByHost ? String(request.hostname ?? '').toLowerCase() : '';
  // The path as sent is measured before it is routed: a routed path may be shorter.
  if (method.length + 1 + sentPath.length > MAX_ENDPOINT_LENGTH) throw Problems.endpointTooLong(MAX_ENDPOINT_LENGTH);
  const input = {
    body: request.body,
    query: queryStart < 0 ? '' : url.slice(queryStart + 1),
    headers: incoming.headers ?? {},
  };
  const built = buildRequest({
    key,
    keyChecked: true,
    caller: callerIdOf(route.caller(request, context)),
    anonymous: settings.anonymousCallers,
    endpoint: { prefix: `${method} `, name: `${host}${routedPath(request) ?? sentPath}` },
    ttlMs: route.ttlMs,
    tombstoneMs: route.tombstoneMs,
    keyStorage: settings.keyStorage,
    fingerprint: () => fingerprintRequest(input, route.fingerprint),
  });
  if (isRefusal(built)) {
    switch (built.refused) {
      case 'anonymous':
        throw Problems.callerUnidentified();
      case 'caller':
        throw Problems.callerUnstorable(built.maxBytes);
      default:
        throw Problems.endpointTooLong(MAX_ENDPOINT_LENGTH);
    }
  }
  if (bodyUnread && typeof route.fingerprint !== 'function') {
    throw Problems.bodyNotParsed();
  }
  if (nestsDeeperThan(request.body, MAX_BODY_DEPTH)) {
    throw Problems.bodyTooDeep(MAX_BODY_DEPTH);
  }
  return built;
}

/** What `hasBody` reads of Node's IncomingMessage. */
interface IncomingBody {
  headers?: Record<string, string | string[] | undefined>;
  complete?: boolean;
  readableLength?: number;
  readableDidRead?: boolean;
}

/**
 * Whether the request carries body bytes (RFC 9112 §6.3): a Content-Length over 0, or a chunked
 * body, unless the whole message has arrived with no byte in it and nobody read from it.
 */
function hasBody(incoming: IncomingBody): boolean {
  const headers = incoming.headers ?? {};
  if (headers['transfer-encoding'] !== undefined) {
    return !(incoming.complete === true && incoming.readableLength === 0 && incoming.readableDidRead === false);
  }
  const length = headers['content-length'];
  return typeof length === 'string' && length !== '0' && length.trim() !== '' && Number(length) !== 0;
}
