import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/** `node scripts/doc-samples.mjs` on `root`: its exit code and the problems it reported. */
async function docSamples(root: string, ...args: string[]): Promise<{ code: number; problems: string[] }> {
  const run = promisify(execFile)(process.execPath, ['scripts/doc-samples.mjs', '--root', root, ...args]);
  const { code, stderr } = await run.then(
    ({ stderr }) => ({ code: 0, stderr }),
    (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
  );
  return { code, problems: stderr.split('\n').filter(Boolean) };
}

/** A copy of the pages and of the sources they name, to plant differences in. */
function copyOfThePages(): string {
  const root = mkdtempSync(join(tmpdir(), 'doc-samples-'));
  for (const path of ['README.md', 'docs', 'sample']) {
    cpSync(path, join(root, path), {
      recursive: true,
      filter: (source: string) => !/[/\\](node_modules|dist)([/\\]|$)/.test(source),
    });
  }
  return root;
}

describe('every TypeScript block of README.md and docs/ is cut from a sample app (scripts/doc-samples.mjs)', () => {
  it('holds for the pages as they are', async () => {
    expect(await docSamples('.')).toEqual({ code: 0, problems: [] });
  });

  it('finds a block that differs from its source, a source gone, a block with no source; --write mends the first', async () => {
    const root = copyOfThePages();
    try {
      const controller = join(root, 'sample/payments-typeorm/src/payments/payments.controller.ts');
      writeFileSync(
        controller,
        readFileSync(controller, 'utf8').replace('@Idempotent()', "@Idempotent({ ttl: '1h' })"),
      );
      rmSync(join(root, 'sample/payments-protected/src/reseal.ts'));
      writeFileSync(join(root, 'docs/extra.md'), '# Extra\n\n```ts\nconst unchecked = 1;\n```\n');
      const found = await docSamples(root);
      expect(found.code).toBe(1);
      expect(found.problems).toEqual([
        expect.stringMatching(/^docs\/extra\.md:3: a TypeScript block with no sample app behind it/),
        expect.stringMatching(
          /^docs\/http\.md:\d+: differs from sample\/payments-typeorm\/src\/payments\/payments\.controller\.ts#controller/,
        ),
        expect.stringMatching(
          /^docs\/storage\.md:\d+: sample\/payments-protected\/src\/reseal\.ts#reseal does not exist/,
        ),
        expect.stringMatching(
          /^docs\/typeorm\.md:\d+: differs from sample\/payments-typeorm\/src\/payments\/payments\.controller\.ts#controller/,
        ),
      ]);
      const written = await docSamples(root, '--write');
      expect(written.problems).toEqual([
        expect.stringMatching(/^docs\/extra\.md:3/),
        expect.stringMatching(
          /^docs\/storage\.md:\d+: sample\/payments-protected\/src\/reseal\.ts#reseal does not exist/,
        ),
      ]);
      expect(readFileSync(join(root, 'docs/typeorm.md'), 'utf8')).toContain("@Idempotent({ ttl: '1h' })");
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
