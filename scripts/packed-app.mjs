// What the scripts that install the packed tarball into a fresh app share (smoke-pack.mjs,
// sample-apps.mjs, quick-start.mjs): running a command, the newest NestJS 12 dependencies, the
// app's tsconfig.json, and a PostgreSQL (DATABASE_URL, else embedded).
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** How long one command may run (an install, a build, a check) before it is killed. */
const COMMAND_TIMEOUT_MS = 10 * 60_000;

/** Runs a command in `cwd`; returns its stdout; stderr goes to `stderr` ('inherit' or 'pipe'). */
export const run = (command, args, cwd, env = process.env, stderr = 'inherit') =>
  execFileSync(command, args, {
    cwd,
    env,
    stdio: ['ignore', 'pipe', stderr],
    encoding: 'utf8',
    timeout: COMMAND_TIMEOUT_MS,
    killSignal: 'SIGKILL',
  });

/** The newest NestJS 12 app's common dependencies. */
export const NEST12 = {
  '@nestjs/common': '^12.0.0',
  '@nestjs/core': '^12.0.0',
  '@nestjs/platform-express': '^12.0.0',
  pg: '^8.11.0',
  'reflect-metadata': '^0.2.0',
  rxjs: '^7.8.0',
};

/** An ESM app's module settings. */
export const ESM = { type: 'module', compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext' } };

/** Writes the app's tsconfig.json: strict, decorators with metadata, src/ to dist/, and `compilerOptions` over that. */
export function writeTsconfig(dir, compilerOptions) {
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        lib: ['ES2023', 'DOM'],
        strict: true,
        skipLibCheck: true,
        rootDir: 'src',
        outDir: 'dist',
        experimentalDecorators: true,
        emitDecoratorMetadata: true,
        types: ['node'],
        ...compilerOptions,
      },
      include: ['src'],
    }),
  );
}

/** DATABASE_URL's PostgreSQL, else an embedded one from the build (`root`/dist): `{ url, stop() }`. */
export async function startPostgres(root) {
  if (process.env.DATABASE_URL) return { url: process.env.DATABASE_URL, stop: async () => undefined };
  const { startEmbeddedPostgres } = await import(join(root, 'dist/esm/demo/database/embedded-postgres.js'));
  return startEmbeddedPostgres();
}
