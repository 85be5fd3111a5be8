/** What `routedPath` reads of a platform's request: Express's matched route, Fastify's route options. */
interface RoutedRequest {
  route?: { path?: unknown };
  routeOptions?: { url?: unknown };
  params?: Record<string, unknown>;
}

/** Template syntax other than plain `:name` segments: wildcards, optional parts, patterns. */
const NOT_PLAIN = /[*?(){}[\]+]/;

/**
 * The path of a request as its router matched it: the route's template with the request's
 * parameters put back, percent-encoded. Spellings the router treats as one route (Express ignores
 * case and a trailing slash by default; Fastify decodes the path before matching) then name one
 * scope, while different parameter values stay different scopes. `undefined` when the route has
 * no plain template (wildcards, optional segments, patterns) or a parameter is missing: the path
 * as sent is used instead.
 */
export function routedPath(request: RoutedRequest): string | undefined {
  const template = request.routeOptions?.url ?? request.route?.path;
  if (typeof template !== 'string' || !template.startsWith('/') || NOT_PLAIN.test(template)) return undefined;
  const params = request.params ?? {};
  let complete = true;
  const path = template.replace(/:(\w+)/g, (_segment, name: string) => {
    const value = params[name];
    if (typeof value !== 'string') complete = false;
    return typeof value === 'string' ? encodeURIComponent(value) : '';
  });
  return complete ? path : undefined;
}
