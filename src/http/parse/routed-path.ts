/** What `routedPath` reads of a platform's request: Express's matched route, Fastify's route options. */
interface RoutedRequest {
  route?: { path?: unknown };
  /** Express: the path an outer app mounted this one at (`outer.use('/v1', app)`), as sent. */
  baseUrl?: unknown;
  /** Express: this app, whose `mountpath` is the pattern it was mounted with. */
  app?: { mountpath?: unknown };
  routeOptions?: { url?: unknown };
  params?: Record<string, unknown>;
}

/**
 * One piece of a route template: a `:name` parameter (optional when `name?`), a wildcard (`*name`
 * in Express 5, whose value is the list of segments; `*` in Fastify, a string), or an Express 5
 * optional group `{…}`. Everything else is literal text.
 */
const TOKEN =
  /\{|\}|:([$_\p{ID_Start}][$\u200c\u200d\p{ID_Continue}]*)(\??)|\*([$_\p{ID_Start}][$\u200c\u200d\p{ID_Continue}]*)?/gu;

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
 * On Express the template is relative to where an outer app mounted the app (`outer.use('/v1',
 * app)`): that mount path, as sent, comes first, so apps mounted at `/v1` and `/v2` (or at
 * `/tenants/:tenant`) keep their scopes apart. Fastify's route URL includes its prefixes already.
 *
 * `undefined` when the template uses other syntax (patterns such as `:id(\\d+)`), or a parameter
 * the template requires is missing: the path as sent is used instead.
 */
export function routedPath(request: RoutedRequest): string | undefined {
  const template = request.routeOptions?.url ?? request.route?.path;
  if (typeof template !== 'string' || !template.startsWith('/') || UNSUPPORTED.test(template)) return undefined;
  const params = request.params ?? {};
  // A template without parameters or groups (the common `/payments`) is its own path.
  if (!/[:*{}]/.test(template)) {
    for (const _ in params) return undefined;
    return template.includes('?') ? undefined : mountOf(request) + template;
  }
  // Each open group collects its text and whether every parameter in it matched.
  const groups: Array<{ text: string; matched: boolean }> = [{ text: '', matched: true }];
  const named = new Set<string>();
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
      named.add(token[1]);
      const value =
        typeof params[token[1]] === 'string'
          ? encoded([params[token[1]] as string], template, token.index, from)
          : undefined;
      if (value !== undefined) group.text += value;
      else if (token[2] === '?') group.text = group.text.replace(/\/$/, '');
      else if (groups.length > 1) group.matched = false;
      else return undefined;
    } else {
      named.add(token[3] ?? '*');
      const value = wildcardValue(params[token[3] ?? '*'], template, token.index, from);
      if (value !== undefined) group.text += value;
      else if (groups.length > 1) group.matched = false;
      else return undefined;
    }
  }
  const rest = template.slice(from);
  if (groups.length !== 1 || rest.includes('?')) return undefined;
  // A parameter the template was not seen to name (syntax not understood here) would leave its
  // value out of the path, and every value in one scope: the path as sent is used instead.
  for (const name of Object.keys(params)) if (!named.has(name)) return undefined;
  return mountOf(request) + groups[0].text + rest;
}

/**
 * Where an outer Express app mounted this one: its mount pattern when that is plain text and
 * the path sent matched it (`/V1` for `/v1`: Express matches mounts in any case), so that a
 * retry spelled otherwise is the same scope; else the mount path as sent (a pattern with
 * parameters, `/tenants/:tenant`, whose values must stay apart; a mount inside a mount).
 */
function mountOf(request: RoutedRequest): string {
  const sent = request.baseUrl;
  if (request.routeOptions?.url !== undefined || typeof sent !== 'string' || sent === '') return '';
  const pattern = request.app?.mountpath;
  if (typeof pattern !== 'string' || /[:*?()[\]{}\\]/.test(pattern)) return sent;
  const plain = pattern.replace(/\/+$/, '');
  return plain.toLowerCase() === sent.toLowerCase() ? plain : sent;
}

/**
 * Segments of a parameter's value, each encoded, joined by `/`. When the parameter shares its path
 * segment with other text (`/:from-:to`, `/:name{.:ext}`, `/*path{.:ext}`), the characters that
 * could separate it from its neighbours are encoded too, so that `from` "A", `to` "B-C" and `from`
 * "A-B", `to` "C" stay two paths.
 */
function encoded(segments: readonly string[], template: string, start: number, end: number): string {
  const alone = startsSegment(template, start) && endsSegment(template, end);
  return segments
    .map((segment) => {
      const value = encodeURIComponent(segment);
      return alone ? value : value.replace(/[!'()*._~-]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
    })
    .join('/');
}

function startsSegment(template: string, at: number): boolean {
  return template[at - 1] === '/' || (template[at - 1] === '{' && template[at - 2] === '/');
}

function endsSegment(template: string, at: number): boolean {
  if (at === template.length || template[at] === '/' || template.startsWith('{/', at)) return true;
  return template[at] === '}' && endsSegment(template, at + 1);
}

/** A wildcard's value as it goes back into the path (a list of segments, or one string). */
function wildcardValue(value: unknown, template: string, start: number, end: number): string | undefined {
  if (typeof value === 'string') return encoded(value.split('/'), template, start, end);
  if (Array.isArray(value) && value.length > 0 && value.every((segment) => typeof segment === 'string')) {
    return encoded(value, template, start, end);
  }
  return undefined;
}
