import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

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
