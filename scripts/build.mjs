// Builds the dual package: ESM in dist/esm (with the demo), CommonJS in dist/cjs, and writes the
// plain SQL migrations from the same statements the TypeORM migration classes run. A dist built
// from the same inputs (src/, the tsconfig files, package.json and its lockfile, this script: their SHA-256 in
// dist/.inputs) is kept as it is, so that runs started side by side (CI's parallel suites) never
// rebuild under each other; `--force` rebuilds anyway.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { generatePrismaClient } from './prisma-generate.mjs';

const INPUTS = [
  'src',
  'tsconfig.json',
  'tsconfig.build.json',
  'tsconfig.cjs.json',
  'package.json',
  'package-lock.json',
  'scripts/build.mjs',
  'scripts/prisma-generate.mjs',
];
const STAMP = 'dist/.inputs';

function inputsHash() {
  const hash = createHash('sha256');
  const walk = (path) => {
    let entries;
    try {
      entries = readdirSync(path, { withFileTypes: true });
    } catch {
      hash.update(`${path}\0`).update(readFileSync(path)).update('\0');
      return;
    }
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) walk(join(path, entry.name));
  };
  for (const input of INPUTS) if (existsSync(input)) walk(input);
  return hash.digest('hex');
}

// The demo's Prisma client is TypeScript the build compiles: generated first (when its schema changed).
generatePrismaClient();
const inputs = inputsHash();
if (!process.argv.includes('--force') && existsSync(STAMP) && readFileSync(STAMP, 'utf8') === inputs) {
  console.log('build: dist is up to date with src/ (npm run build -- --force rebuilds it)');
  process.exit(0);
}

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

const schema = await import(pathToFileURL('dist/esm/store/migrations/idempotency-keys.schema.js').href);
writeFileSync(
  'migrations/1795996800000-create-idempotency-keys.sql',
  '-- nestjs-pg-idempotency: the idempotency_keys table. Generated from\n' +
    '-- src/store/migrations/idempotency-keys.schema.ts by `npm run build`; safe to re-run.\n\n' +
    schema.CREATE_IDEMPOTENCY_KEYS.map((statement) => `${statement};\n`).join('\n'),
);
const partitioned = await import(
  pathToFileURL('dist/esm/store/migrations/idempotency-keys-partitioned.schema.js').href
);
writeFileSync(
  'migrations/1795996800000-create-partitioned-idempotency-keys.sql',
  '-- nestjs-pg-idempotency: the idempotency_keys table partitioned by expiry (opt-in, instead of\n' +
    '-- 1795996800000-create-idempotency-keys.sql). Generated from\n' +
    '-- src/store/migrations/idempotency-keys-partitioned.schema.ts by `npm run build`; safe to re-run.\n' +
    '-- The module creates the partitions; see docs/partitioned-keys.md.\n\n' +
    partitioned.CREATE_PARTITIONED_IDEMPOTENCY_KEYS.map((statement) => `${statement};\n`).join('\n'),
);
writeFileSync(
  'migrations/1796860800000-add-idempotency-tombstones.sql',
  '-- nestjs-pg-idempotency: what an idempotency_keys table created before tombstones lacks (plain or\n' +
    '-- partitioned); a table created since has it. Generated from\n' +
    '-- src/store/migrations/idempotency-keys.schema.ts by `npm run build`; safe to re-run.\n\n' +
    schema.ADD_TOMBSTONE_COLUMNS.map((statement) => `${statement};\n`).join('\n'),
);
const digest = await import(pathToFileURL('dist/esm/store/migrations/digest-idempotency-keys.schema.js').href);
writeFileSync(
  'migrations/1796169600000-digest-idempotency-keys.sql',
  "-- nestjs-pg-idempotency: rewrites idempotency_keys' keys as digests, before starting the app with\n" +
    "-- storage: { keys: 'digest' }, while no instance serves (docs/storage.md). Generated from\n" +
    '-- src/store/migrations/digest-idempotency-keys.schema.ts by `npm run build`; safe to re-run; one-way.\n\n' +
    digest.DIGEST_IDEMPOTENCY_KEYS.map((statement) => `${statement};\n`).join('\n'),
);
const outbox = await import(pathToFileURL('dist/esm/store/migrations/idempotency-outbox.schema.js').href);
writeFileSync(
  'migrations/1796515200000-create-idempotency-outbox.sql',
  '-- nestjs-pg-idempotency: the idempotency_outbox table (docs/outbox.md), for apps that stage\n' +
    "-- messages in the key's transaction. Generated from\n" +
    '-- src/store/migrations/idempotency-outbox.schema.ts by `npm run build`; safe to re-run.\n\n' +
    outbox.CREATE_IDEMPOTENCY_OUTBOX.map((statement) => `${statement};\n`).join('\n'),
);
writeFileSync(STAMP, inputs);
