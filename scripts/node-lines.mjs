// The Node.js lines the project is tested and measured on, besides the machine's own Node.js.
// Each binary comes from the npm registry (the `node` package of that version ships it inside a
// platform package) and is installed into .node-lines/<major>/ (ignored by git), once.
//
//   node scripts/node-lines.mjs 24        installs Node.js 24 if needed, prints its bin folder
//   PATH="$(node scripts/node-lines.mjs 26):$PATH" npm test
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The version installed for each line: the newest of each when it was last raised. */
export const NODE_LINES = { 22: '22.23.3', 24: '24.21.0', 26: '26.10.0' };

const root = resolve(import.meta.dirname, '..');

/** The folder holding the `node` binary of `line` (a major version), installed if missing. */
export function nodeLineBin(line) {
  const version = NODE_LINES[line];
  if (!version) {
    throw new Error(`node-lines: no Node.js line ${line}; the lines are ${Object.keys(NODE_LINES).join(', ')}`);
  }
  const dir = join(root, '.node-lines', String(line));
  const bin = join(dir, 'node_modules/node/bin');
  if (installedVersion(bin) !== `v${version}`) {
    mkdirSync(dir, { recursive: true });
    // The `node` package puts its binary in place from its install script.
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ private: true, allowScripts: { node: true } }) + '\n');
    const args = [
      'install',
      '--no-audit',
      '--no-fund',
      '--no-save',
      '--ignore-scripts=false',
      '--loglevel=error',
      `node@${version}`,
    ];
    execFileSync('npm', args, {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const installed = installedVersion(bin);
    if (installed !== `v${version}`) {
      throw new Error(`node-lines: installing node@${version} gave ${installed ?? 'no binary'} in ${bin}`);
    }
  }
  return bin;
}

/** A Node.js binary: a line's ("24") or a path, as BENCH_NODE and the scripts accept it. */
export function nodeBinary(lineOrPath) {
  return /^\d+$/.test(lineOrPath) ? join(nodeLineBin(lineOrPath), 'node') : lineOrPath;
}

function installedVersion(bin) {
  const node = join(bin, 'node');
  if (!existsSync(node)) return undefined;
  try {
    return execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  const line = process.argv[2];
  if (!line) {
    console.error(`usage: node scripts/node-lines.mjs <${Object.keys(NODE_LINES).join('|')}>`);
    process.exit(2);
  }
  try {
    console.log(nodeLineBin(line));
  } catch (error) {
    console.error(error.message);
    process.exit(1);
  }
}
