import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { HttpPlatform } from './apps.js';

/**
 * The version of the package that `import … from name` loads here: the package.json above the
 * file `require.resolve` finds (Jest's resolution, moduleNameMapper included, as for src/).
 * Read from disk because TypeORM 1's exports map does not export its package.json.
 */
export function loadedVersion(name: string): string {
  for (let dir = dirname(require.resolve(name)); dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (!existsSync(file)) continue;
    const manifest = JSON.parse(readFileSync(file, 'utf8'));
    if (manifest.name === name) return manifest.version;
  }
  throw new Error(`no package.json of ${name} above ${require.resolve(name)}`);
}

/** The major version of the NestJS the suites load (12; 11 under jest.nest11.config.mjs). */
export const NEST_MAJOR = Number(loadedVersion('@nestjs/core').split('.')[0]);

/**
 * The Content-Type of the module's problems when Nest's default exception filter sends them.
 * NestJS 11's Express adapter replaces an error body's Content-Type that does not start with
 * `application/json` by `application/json` (and logs a warning); NestJS 12 keeps any JSON media
 * type, `+json` included. Fastify keeps it on both. The body and other headers are the same.
 */
export function defaultFilterProblemContentType(platform: HttpPlatform): RegExp {
  return NEST_MAJOR === 11 && platform === 'express' ? /^application\/json/ : /^application\/problem\+json/;
}
