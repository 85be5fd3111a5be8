import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA } from './nest-route-metadata.js';

/** The methods that change nothing (RFC 9110): a key de-duplicates nothing on them. */
const SAFE_METHODS = new Map([
  [RequestMethod.GET, 'Get'],
  [RequestMethod.HEAD, 'Head'],
  [RequestMethod.OPTIONS, 'Options'],
]);

/**
 * The decorator of a route handler's safe method (`'Get'`, `'Head'`, `'Options'`), or `undefined`
 * for a route that may change something (POST, PUT, PATCH, DELETE, `@All()`) or a handler that is
 * no route.
 */
export function safeMethodOf(handler: Function): string | undefined {
  return SAFE_METHODS.get(Reflect.getMetadata(METHOD_METADATA, handler));
}
