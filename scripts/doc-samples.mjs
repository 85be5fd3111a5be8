// The pages' code is cut from the sample apps: every ```ts block of README.md and docs/*.md stands
// right under a marker that names where it comes from,
//   <!-- sample: sample/payments-typeorm/src/app.module.ts#module -->
// a file of the repository and, after `#`, a region of it (the lines between `// #region module`
// and `// #endregion module`, other markers left out, their common indentation removed); with no
// region, the whole file. A block that differs from its source, a marker whose source is gone, or
// a ```ts block without a marker is reported.
//   node scripts/doc-samples.mjs           report (exit 1 on any)
//   node scripts/doc-samples.mjs --write   rewrite every block from its source
//   --root <folder>                        the pages and sources of another tree (default: this repository)
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const MARKER = /^\s*<!-- sample: (\S+?)(?:#([\w-]+))? -->\s*$/;
const REGION = /^\s*\/\/ #(end)?region\b\s*([\w-]*)/;
const FENCE_OPEN = /^( *)```(\w*)(?:\s.*)?$/;

/** The pages whose blocks are checked: README.md and docs/*.md, under `root`. */
export function pagesOf(root) {
  const docs = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs];
}

/** The text of `region` of `source` (the whole of it without region markers when `region` is undefined). */
export function regionOf(source, region) {
  const lines = source.split('\n');
  let taken = lines;
  if (region !== undefined) {
    const start = lines.findIndex((line) => REGION.exec(line)?.[1] === undefined && REGION.exec(line)?.[2] === region);
    if (start < 0) return undefined;
    const end = lines.findIndex(
      (line, at) => at > start && REGION.exec(line)?.[1] === 'end' && [region, ''].includes(REGION.exec(line)[2]),
    );
    if (end < 0) return undefined;
    taken = lines.slice(start + 1, end);
  }
  taken = taken.filter((line) => !REGION.test(line));
  while (taken.length > 0 && taken[taken.length - 1].trim() === '') taken.pop();
  const indent = Math.min(...taken.filter((line) => line.trim() !== '').map((line) => /^ */.exec(line)[0].length));
  return taken.map((line) => line.slice(Number.isFinite(indent) ? indent : 0)).join('\n');
}

/**
 * What differs between the pages under `root` and their sources: one line per block, naming the
 * page and line. With `write`, the blocks are rewritten from their sources instead (and only what
 * cannot be, reported).
 */
export function checkDocSamples(root, { write = false } = {}) {
  const problems = [];
  for (const page of pagesOf(root)) {
    const path = join(root, page);
    const lines = readFileSync(path, 'utf8').split('\n');
    let changed = false;
    for (let at = 0; at < lines.length; at++) {
      const fence = FENCE_OPEN.exec(lines[at]);
      if (!fence) continue;
      const [, indent, lang] = fence;
      let end = at + 1;
      while (end < lines.length && lines[end] !== `${indent}\`\`\``) end++;
      const marker = at > 0 ? MARKER.exec(lines[at - 1]) : null;
      const where = `${page}:${at + 1}`;
      if (!marker) {
        if (['ts', 'typescript'].includes(lang))
          problems.push(
            `${where}: a TypeScript block with no sample app behind it (put <!-- sample: path#region --> above it)`,
          );
        at = end;
        continue;
      }
      const [, file, region] = marker;
      const sourcePath = join(root, file);
      const text = existsSync(sourcePath) ? regionOf(readFileSync(sourcePath, 'utf8'), region) : undefined;
      // A block inside a list item is indented as its fence is.
      const source = text
        ?.split('\n')
        .map((line) => (line === '' ? line : `${indent}${line}`))
        .join('\n');
      if (source === undefined) {
        problems.push(`${where}: ${file}${region ? `#${region}` : ''} does not exist`);
        at = end;
        continue;
      }
      const shown = lines.slice(at + 1, end).join('\n');
      if (shown !== source) {
        if (write) {
          lines.splice(at + 1, end - at - 1, ...source.split('\n'));
          end = at + 1 + source.split('\n').length;
          changed = true;
        } else {
          problems.push(
            `${where}: differs from ${file}${region ? `#${region}` : ''} (node scripts/doc-samples.mjs --write)`,
          );
        }
      }
      at = end;
    }
    if (changed) writeFileSync(path, lines.join('\n'));
  }
  return problems;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const at = process.argv.indexOf('--root');
  const root = at > 0 ? resolve(process.argv[at + 1]) : resolve(import.meta.dirname, '..');
  const problems = checkDocSamples(root, { write: process.argv.includes('--write') });
  for (const problem of problems) console.error(problem);
  if (problems.length > 0) process.exitCode = 1;
}
