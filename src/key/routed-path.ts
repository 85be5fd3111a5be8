/** What `routedPath` reads of a platform's request: Express's matched route, Fastify's route options. */
interface RoutedRequest {
  route?: { path?: unknown };
  routeOptions?: { url?: unknown };
  params?: Record<string, unknown>;
}

/**
 * One piece of a route template: a `:name` parameter (optional when `name?`), a wildcard (`*name`
 * in Express 5, whose value is the list of segments; `*` in Fastify, a string), or an Express 5
 * optional group `{…}`. Everything else is literal text.
 */
const TOKEN = /\{|\}|:([A-Za-z_$][\w$]*)(\??)|\*([A-Za-z_$][\w$]*)?/g;

/** Template syntax that stays unsupported: patterns, repeats, escapes, quoted names. */
const UNSUPPORTED = /[()[\]+\\"]|::/;

/**
 * The path of a request as its router matched it: the route's template with the request's
 * parameters put back, percent-encoded. Spellings the router treats as one route (Express ignores
 * case and a trailing slash by default; Fastify decodes the path before matching) then name one
 * scope, while different parameter values stay different scopes:
 *
 * - `:name` is the parameter's value, encoded (`encodeURIComponent`, so a `/` in it stays `%2F`;
 *   sharing its segment with other text, its `-`, `.` and the like too);
 * - a wildcard is its segments, each encoded, joined with `/` (Express 5 gives them as a list,
 *   Fastify as one string, already decoded);
 * - an optional parameter (`:name?`) or group (`{/:name}`) that did not match is left out, with
 *   the `/` before an optional parameter.
 *
 * `undefined` when the template uses other syntax (patterns such as `:id(\\d+)`), or a parameter
 * the template requires is missing: the path as sent is used instead.
 */
export function routedPath(request: RoutedRequest): string | undefined {
  const template = request.routeOptions?.url ?? request.route?.path;
  if (typeof template !== 'string' || !template.startsWith('/') || UNSUPPORTED.test(template)) return undefined;
  const params = request.params ?? {};
  // Each open group collects its text and whether every parameter in it matched.
  const groups: Array<{ text: string; matched: boolean }> = [{ text: '', matched: true }];
  let from = 0;
  for (const token of template.matchAll(TOKEN)) {
    const group = groups[groups.length - 1];
    const literal = template.slice(from, token.index);
    if (literal.includes('?')) return undefined;
    group.text += literal;
    from = token.index + token[0].length;
    if (token[0] === '{') {
      groups.push({ text: '', matched: true });
    } else if (token[0] === '}') {
      if (groups.length === 1) return undefined;
      const closed = groups.pop()!;
      if (closed.matched) groups[groups.length - 1].text += closed.text;
    } else if (token[1] !== undefined) {
      const value = typeof params[token[1]] === 'string' ? paramValue(params[token[1]] as string, template, token.index, from) : undefined;
      if (value !== undefined) group.text += value;
      else if (token[2] === '?') group.text = group.text.replace(/\/$/, '');
      else if (groups.length > 1) group.matched = false;
      else return undefined;
    } else {
      const value = wildcardValue(params[token[3] ?? '*']);
      if (value !== undefined) group.text += value;
      else if (groups.length > 1) group.matched = false;
      else return undefined;
    }
  }
  const rest = template.slice(from);
  if (groups.length !== 1 || rest.includes('?')) return undefined;
  return groups[0].text + rest;
}

/**
 * A `:name` parameter's value as it goes back into the path, encoded. When the parameter shares
 * its segment with other text (`/:from-:to`, `/:name.:ext`), the characters that could separate
 * it from its neighbours are encoded too, so that `from` "A", `to` "B-C" and `from` "A-B", `to`
 * "C" stay two paths.
 */
function paramValue(value: string, template: string, start: number, end: number): string {
  const encoded = encodeURIComponent(value);
  const alone = template[start - 1] === '/' && (end === template.length || '/{}'.includes(template[end]));
  return alone ? encoded : encoded.replace(/[!'()*._~-]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** A wildcard's value as it goes back into the path: its segments, each encoded. */
function wildcardValue(value: unknown): string | undefined {
  if (typeof value === 'string') return value.split('/').map(encodeURIComponent).join('/');
  if (Array.isArray(value) && value.length > 0 && value.every((segment) => typeof segment === 'string')) {
    return value.map(encodeURIComponent).join('/');
  }
  return undefined;
}
