import type { ChildProcess } from 'node:child_process';

/** A demo app running as its own OS process (`npm start`'s entry point, built). */
export interface DemoProcess {
  url: string;
  port: number;
  child: ChildProcess;
  output(): string;
  /** SIGTERM, and resolves with the exit code once it exited. */
  stop(): Promise<number | null>;
  kill(): Promise<void>;
}

export function startDemoProcess(options: {
  databaseUrl: string;
  env?: Record<string, string>;
  port?: number;
  script?: string;
}): Promise<DemoProcess>;
