import {
  NEXT_PARAM,
  RESPONSE_PARAM,
  RESPONSE_PASSTHROUGH_METADATA,
  ROUTE_ARGS_METADATA,
  SSE_METADATA,
} from './nest-route-metadata.js';

/**
 * Why the responses of a route handler cannot be recorded and replayed, or `undefined` when
 * they can. Two shapes are refused:
 * - `@Sse()`: an event stream has no final response to store;
 * - `@Res()` or `@Next()` without `passthrough: true`: the handler answers by itself, so Nest
 *   sends nothing on a replay and the retry would hang.
 */
export function unreplayableReason(controller: Function, methodName: string): string | undefined {
  const handler = (controller.prototype as Record<string, unknown>)[methodName];
  if (typeof handler === 'function' && Reflect.getMetadata(SSE_METADATA, handler)) {
    return 'it is an @Sse() route: a stream of events cannot be replayed; remove @Idempotent() from it';
  }
  const args: Record<string, unknown> = Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, methodName) ?? {};
  const types = Object.keys(args).map((key) => Number(key.split(':')[0]));
  const passthrough = Reflect.getMetadata(RESPONSE_PASSTHROUGH_METADATA, controller, methodName) === true;
  if (!passthrough && types.includes(RESPONSE_PARAM)) {
    return (
      'it takes @Res() without passthrough, so it writes the response itself and a replay would never be sent; ' +
      'use @Res({ passthrough: true }) and return the body (or remove @Idempotent())'
    );
  }
  if (!passthrough && types.includes(NEXT_PARAM)) {
    return 'it takes @Next(), so the response is not its own to record; remove @Idempotent() or @Next()';
  }
  return undefined;
}
