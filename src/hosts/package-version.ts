import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * The version of package `name` as the app resolves it (from the working directory), for the
 * messages of a host's startup check; `undefined` when it cannot be found.
 */
export function packageVersion(name: string): string | undefined {
  try {
    const main = createRequire(join(process.cwd(), 'index.js')).resolve(name);
    for (let dir = dirname(main); dir !== dirname(dir); dir = dirname(dir)) {
      try {
        const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
          name?: string;
          version?: string;
        };
        if (manifest.name === name) return manifest.version;
      } catch {
        // no package.json here: look one folder up
      }
    }
  } catch {
    // not resolvable from the working directory
  }
  return undefined;
}
