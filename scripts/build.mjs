// Builds the dual package: ESM in dist/esm (with the demo), CommonJS in dist/cjs, and writes the
// plain SQL migration from the same statements the TypeORM migration class runs.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const tsc = (project) => {
  try {
    execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', project], { stdio: 'inherit' });
  } catch {
    console.error(`build: tsc -p ${project} failed`);
    process.exit(1);
  }
};

rmSync('dist', { recursive: true, force: true });
tsc('tsconfig.build.json');
tsc('tsconfig.cjs.json');
mkdirSync('dist/cjs', { recursive: true });
writeFileSync('dist/cjs/package.json', JSON.stringify({ type: 'commonjs' }) + '\n');

const schema = await import(pathToFileURL('dist/esm/migrations/idempotency-keys.schema.js').href);
writeFileSync(
  'migrations/1795996800000-create-idempotency-keys.sql',
  '-- nestjs-pg-idempotency: the idempotency_keys table. Generated from\n' +
    '-- src/migrations/idempotency-keys.schema.ts by `npm run build`; safe to re-run.\n\n' +
    schema.CREATE_IDEMPOTENCY_KEYS.map((statement) => `${statement};\n`).join('\n'),
);
