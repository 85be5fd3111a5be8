import { setTimeout as sleep } from 'node:timers/promises';
import { appDatabaseUrl } from './apps.js';
import { type DemoProcess, startDemoProcess as startDemo } from './demo-process.cjs';

export type { DemoProcess };

/** Starts the built demo (`npm start`'s entry point) on the test database with `env` and waits until it listens. */
export function startDemoProcess(env: Record<string, string> = {}): Promise<DemoProcess> {
  return startDemo({ databaseUrl: appDatabaseUrl(), env });
}

/** Starts an app of a test's own (`script`, on the root install) as its own process, like the demo. */
export function startAppProcess(script: string, env: Record<string, string> = {}): Promise<DemoProcess> {
  return startDemo({ databaseUrl: appDatabaseUrl(), env, script });
}

/**
 * Polls `check` every 20 ms until it returns a value other than undefined/false, or fails after
 * `ms` (by default 30 s: reached only when the value never comes); the failure carries what
 * `context` says of the moment (the processes' output, the broker's counts).
 */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  ms = 30_000,
  context?: () => Promise<string>,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) {
      const seen = context
        ? `\n${await context().catch((error: unknown) => `(context failed: ${String(error)})`)}`
        : '';
      throw new Error(`timed out waiting for ${what}${seen}`);
    }
    await sleep(20);
  }
}
