// The TypeScript samples of a package's Markdown (README.md and docs/*.md): every ```ts block is a
// whole file a reader may copy, named for where it stands (`docs/http.md:42` → docs-http-42.ts).
// Signature sketches that are not meant to compile are fenced as ```text.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The ```ts blocks of README.md and docs/*.md under `folder`, in reading order. */
export function samplesOf(folder) {
  const docs = existsSync(join(folder, 'docs'))
    ? readdirSync(join(folder, 'docs'))
        .filter((name) => name.endsWith('.md'))
        .sort()
        .map((name) => `docs/${name}`)
    : [];
  const samples = [];
  for (const page of ['README.md', ...docs]) {
    const lines = readFileSync(join(folder, page), 'utf8').split('\n');
    for (let at = 0; at < lines.length; at++) {
      if (!/^```(ts|typescript)\s*$/.test(lines[at])) continue;
      const start = at + 1;
      let end = start;
      while (end < lines.length && !/^```\s*$/.test(lines[end])) end++;
      samples.push({
        where: `${page}:${start}`,
        file: `${page
          .replace(/\.md$/, '')
          .replace(/[^A-Za-z0-9]+/g, '-')
          .toLowerCase()}-${start}.ts`,
        code: `${lines.slice(start, end).join('\n')}\n`,
      });
      at = end;
    }
  }
  return samples;
}
