import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/** Runs the built CLI (`npx nestjs-pg-idempotency …`) in a process of its own: its exit code and output. */
export const cli = (args: string[], env: Record<string, string | undefined> = {}) =>
  promisify(execFile)(process.execPath, ['dist/esm/operations/cli/main.js', ...args], {
    env: { ...process.env, ...env },
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      code: error.code,
      stdout: error.stdout,
      stderr: error.stderr,
    }),
  );
