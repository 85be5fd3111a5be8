/*
 * Metadata keys Nest writes for route handlers. `@nestjs/common` keeps them in its `constants`
 * and `enums/route-paramtypes.enum` files, which its package root does not export (and deep
 * imports do not resolve under Nest 12), so the values are repeated here. They are the same in
 * Nest 11 and 12 (`@nestjs/common/constants.js`):
 *   ROUTE_ARGS_METADATA = '__routeArguments__'           (class, method) → { '<type>:<index>': … }
 *   RESPONSE_PASSTHROUGH_METADATA = '__responsePassthrough__'   (class, method) → true
 *   SSE_METADATA = '__sse__'                              handler function → true
 *   RouteParamtypes.RESPONSE = 1, RouteParamtypes.NEXT = 2
 *   PATH_METADATA = 'path'                                handler function → the route's path
 *   METHOD_METADATA = 'method'                            handler function → its RequestMethod
 * and `@nestjs/microservices` (`constants.js`), for `@MessagePattern()` / `@EventPattern()`:
 *   PATTERN_METADATA = 'microservices:pattern'           handler function → its patterns
 */
export const ROUTE_ARGS_METADATA = '__routeArguments__';
export const RESPONSE_PASSTHROUGH_METADATA = '__responsePassthrough__';
export const SSE_METADATA = '__sse__';
export const RESPONSE_PARAM = 1;
export const NEXT_PARAM = 2;
export const PATH_METADATA = 'path';
export const METHOD_METADATA = 'method';
export const PATTERN_METADATA = 'microservices:pattern';
