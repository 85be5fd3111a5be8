import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../src/demo/database/free-port.js';
import { databaseUrl } from './apps.js';

/** A demo app running as its own OS process (`npm start`'s entry point, built). */
export interface DemoProcess {
  url: string;
  child: ChildProcess;
  output(): string;
  /** SIGTERM, and resolves with the exit code once it exited. */
  stop(): Promise<number | null>;
  kill(): Promise<void>;
}

/** Starts `node dist/esm/demo/main.js` on the test database with `env` and waits until it listens. */
export async function startDemoProcess(env: Record<string, string> = {}): Promise<DemoProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['dist/esm/demo/main.js'], {
    env: { ...process.env, DATABASE_URL: databaseUrl(), PORT: String(port), IDEMPOTENCY_SWEEP_INTERVAL_MS: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + 30_000;
  while (!output.includes('listening on')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the demo did not start:\n${output}`);
    }
    await sleep(50);
  }
  const exited = once(child, 'exit');
  return {
    url: `http://127.0.0.1:${port}`,
    child,
    output: () => output,
    stop: async () => {
      child.kill('SIGTERM');
      const timeout = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timeout);
      return child.exitCode;
    },
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Polls `check` every 20 ms until it returns a value other than undefined/false, or fails after `ms`. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined | false>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}
