// The links of the installed package's Markdown (README.md, CHANGELOG.md, BENCHMARKS.md, docs/):
// every relative link names a file the package ships, and every #anchor a heading of that file,
// as a reader following them in node_modules or on the registry's page of the package finds them.
//   node scripts/smoke-pack/links.mjs <an installed package's folder>
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** GitHub's heading anchor: lower case, punctuation dropped, spaces as hyphens; repeats get -1, -2. */
function anchorsOf(markdown) {
  const anchors = new Set();
  const seen = new Map();
  for (const [, text] of withoutFences(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = text
      .replace(/<[^>]+>/g, '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** The text outside fenced code blocks. */
function withoutFences(markdown) {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
}

/** The text outside fenced code blocks and inline code spans, where links are links. */
function withoutCode(markdown) {
  return withoutFences(markdown).replace(/`[^`\n]*`/g, '');
}

/** The broken links of the package in `folder`, each as `file: link (why)`. */
export function brokenLinks(folder) {
  const docs = existsSync(join(folder, 'docs'))
    ? readdirSync(join(folder, 'docs'))
        .filter((name) => name.endsWith('.md'))
        .map((name) => join('docs', name))
    : [];
  const files = ['README.md', 'CHANGELOG.md', 'BENCHMARKS.md', ...docs].filter((file) =>
    existsSync(join(folder, file)),
  );
  const anchors = new Map();
  const anchorsIn = (file) => {
    if (!anchors.has(file)) anchors.set(file, anchorsOf(readFileSync(file, 'utf8')));
    return anchors.get(file);
  };
  const broken = [];
  for (const file of files) {
    const path = join(folder, file);
    for (const [, target] of withoutCode(readFileSync(path, 'utf8')).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const [where, anchor] = target.split('#', 2);
      const linked = where === '' ? path : resolve(dirname(path), decodeURIComponent(where));
      if (relative(folder, linked).startsWith('..')) broken.push(`${file}: ${target} (outside the package)`);
      else if (!existsSync(linked)) broken.push(`${file}: ${target} (not shipped)`);
      else if (anchor && linked.endsWith('.md') && !anchorsIn(linked).has(anchor))
        broken.push(`${file}: ${target} (no such heading)`);
    }
  }
  return { files, broken };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { files, broken } = brokenLinks(resolve(process.argv[2] ?? '.'));
  for (const link of broken) console.error(link);
  console.log(`links: ${files.length} files, ${broken.length} broken`);
  process.exitCode = broken.length === 0 ? 0 : 1;
}
