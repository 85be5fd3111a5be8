// Generates the demo's Prisma client (src/demo/prisma/generated, not committed) from
// src/demo/prisma/schema.prisma when the schema changed since the last generation: with no
// network, as on CI. `prisma generate` needs no schema engine, but the CLI looks for one before it
// starts unless PRISMA_SCHEMA_ENGINE_BINARY names an existing executable (it is never run for
// `generate`): this Node.js binary stands in. `npm run build` runs it first.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const SCHEMA = 'src/demo/prisma/schema.prisma';
const STAMP = 'src/demo/prisma/generated/.schema-sha256';

export function generatePrismaClient() {
  const hash = createHash('sha256')
    .update(readFileSync(SCHEMA))
    .update(readFileSync('package-lock.json'))
    .digest('hex');
  if (existsSync(STAMP) && readFileSync(STAMP, 'utf8') === hash) return;
  execFileSync(process.execPath, ['node_modules/prisma/build/index.js', 'generate', '--schema', SCHEMA], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      PRISMA_SCHEMA_ENGINE_BINARY: process.execPath,
      PRISMA_HIDE_UPDATE_MESSAGE: '1',
      CHECKPOINT_DISABLE: '1',
    },
  });
  writeFileSync(STAMP, hash);
}

if (import.meta.url === `file://${process.argv[1]}`) generatePrismaClient();
