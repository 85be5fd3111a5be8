import { KEY_EXPIRES_HEADER, REPLAYED_HEADER } from '../idempotency.constants.js';

/** The request header browsers must be allowed to send: `Idempotency-Key`. */
export const IDEMPOTENCY_CORS_ALLOWED_HEADERS: readonly string[] = ['Idempotency-Key'];

/**
 * The response headers browsers must be allowed to read: `Idempotent-Replayed` (was this a
 * replay?), `Retry-After` (when to retry a 409) and `Idempotency-Key-Expires` (until when a retry
 * is answered, with `expiryHeader`). None is CORS-safelisted.
 */
export const IDEMPOTENCY_CORS_EXPOSED_HEADERS: readonly string[] = [REPLAYED_HEADER, 'Retry-After', KEY_EXPIRES_HEADER];

/** The two CORS fields the helper touches; the rest of the app's CORS options pass through. */
export interface CorsHeaderOptions {
  allowedHeaders?: string | string[];
  exposedHeaders?: string | string[];
}

/**
 * The app's CORS options with what idempotent requests need added:
 *
 * ```ts
 * app.enableCors(withIdempotencyCors({ origin: 'https://shop.example', credentials: true }));
 * ```
 * - `exposedHeaders` gains `Idempotent-Replayed`, `Retry-After` and `Idempotency-Key-Expires`;
 * - `allowedHeaders`, when the app lists them, gains `Idempotency-Key`. Left unset, both
 *   Express's and Fastify's CORS middleware allow whatever headers the preflight asks for,
 *   `Idempotency-Key` included, so it stays unset.
 *
 * Works with `app.enableCors()` on Express and Fastify; for a CORS options function, apply it
 * to the object that function returns.
 */
export function withIdempotencyCors<T extends object>(
  options: T & CorsHeaderOptions = {} as T,
): T & { exposedHeaders: string[] } {
  return {
    ...options,
    ...(options.allowedHeaders !== undefined && {
      allowedHeaders: union(options.allowedHeaders, IDEMPOTENCY_CORS_ALLOWED_HEADERS),
    }),
    exposedHeaders: union(options.exposedHeaders, IDEMPOTENCY_CORS_EXPOSED_HEADERS),
  };
}

function union(list: string | string[] | undefined, extra: readonly string[]): string[] {
  const names = (typeof list === 'string' ? list.split(',') : (list ?? [])).map((name) => name.trim()).filter(Boolean);
  for (const name of extra) {
    if (!names.some((existing) => existing.toLowerCase() === name.toLowerCase())) names.push(name);
  }
  return names;
}
