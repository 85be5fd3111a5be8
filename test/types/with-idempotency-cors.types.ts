// Compile-time checks (npm run typecheck, part of npm test): how apps call withIdempotencyCors().
import { withIdempotencyCors } from '../../src/index.js';

/** The shape of Nest's CorsOptions (an interface, not exported from @nestjs/common's root). */
interface CorsOptionsLike {
  origin?: string;
  allowedHeaders?: string | string[];
  exposedHeaders?: string | string[];
  credentials?: boolean;
}

// Options that share no field with the helper's (a "weak type" once rejected them).
export const originOnly: { origin: string; exposedHeaders: string[] } = withIdempotencyCors({
  origin: 'https://shop.example',
});
export const listed = withIdempotencyCors({ origin: 'https://shop.example', allowedHeaders: ['Authorization'] });
export const none = withIdempotencyCors();
// An options object typed by an interface keeps its type.
export const typed: CorsOptionsLike = withIdempotencyCors({ credentials: true } as CorsOptionsLike);
// @ts-expect-error allowedHeaders is a string or a list of strings
withIdempotencyCors({ allowedHeaders: 42 });
