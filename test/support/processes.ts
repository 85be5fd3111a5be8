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
 * `ms` (by default 30 s: reached only when the value never comes).
 */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined | false>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}
