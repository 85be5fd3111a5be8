import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { appDatabaseUrl } from './apps.js';

/**
 * A TCP proxy to PostgreSQL. `answerDelayMs` holds PostgreSQL's answers back; `dropExisting()`
 * silently drops the connections open at that moment (no FIN, no RST: what a lost
 * NAT/load-balancer entry or a failed-over host looks like); connections opened afterwards work
 * normally.
 */
export class PostgresProxy {
  private readonly pairs: Array<{ client: Socket; server: Socket; dead: boolean; lost?: boolean }> = [];
  private server?: Server;
  refusing = false;
  /** Client messages a dead connection swallowed: a statement sent over it after `dropExisting()`. */
  swallowed = 0;
  /** Connections refused during an outage. */
  refused = 0;
  /** How late PostgreSQL's answers arrive (a slow network); set it while no query is in flight. */
  answerDelayMs = 0;
  port = 0;

  async start(target: URL): Promise<void> {
    this.server = createServer((client) => {
      if (this.refusing) {
        this.refused += 1;
        return void client.destroy();
      }
      const server = createConnection(Number(target.port || 5432), target.hostname);
      const pair: { client: Socket; server: Socket; dead: boolean; lost?: boolean } = { client, server, dead: false };
      this.pairs.push(pair);
      client.on('data', (chunk) => {
        if (pair.dead) this.swallowed += 1;
        else server.write(chunk);
      });
      server.on('data', (chunk) => {
        if (this.answerDelayMs === 0) return void (pair.dead || client.write(chunk));
        setTimeout(() => void (pair.dead || client.write(chunk)), this.answerDelayMs);
      });
      client.on('error', () => undefined);
      server.on('error', () => undefined);
      client.on('close', () => void (pair.lost || server.destroy()));
      server.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  /**
   * `lost`: the client's own close does not reach PostgreSQL either (the whole path is gone), so
   * the server's session lives on, as it does until TCP keepalive notices, by default for hours.
   */
  dropExisting({ lost = false } = {}): void {
    for (const pair of this.pairs) {
      pair.dead = true;
      if (lost) pair.lost = true;
    }
  }

  /** Closes (FIN) the connections `dropExisting()` left dead, so that no pool keeps them idle. */
  closeDead(): void {
    for (const { client, server, dead } of this.pairs) {
      if (!dead) continue;
      client.destroy();
      server.destroy();
    }
  }

  /**
   * An outage: every open connection is cut (FIN), new ones are cut at once, for `ms` or until
   * `over()` resolves (a condition the test waits for, such as a connection refused meanwhile).
   */
  async outage(over: number | (() => Promise<unknown>)): Promise<void> {
    this.refusing = true;
    for (const { client, server } of this.pairs) {
      client.destroy();
      server.destroy();
    }
    try {
      await (typeof over === 'number' ? sleep(over) : over());
    } finally {
      this.refusing = false;
    }
  }

  async stop(): Promise<void> {
    for (const { client, server } of this.pairs) {
      client.destroy();
      server.destroy();
    }
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

/**
 * Runs `start` (an app's start) with the apps' database URL (`appDatabaseUrl()`) pointing at
 * `proxy`, so that the app reaches PostgreSQL through it; start the proxy on `appDatabaseUrl()`.
 */
export async function throughProxy<T>(proxy: PostgresProxy, start: () => Promise<T>): Promise<T> {
  const before = process.env.APP_DATABASE_URL;
  const url = new URL(appDatabaseUrl());
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  process.env.APP_DATABASE_URL = url.toString();
  try {
    return await start();
  } finally {
    if (before === undefined) delete process.env.APP_DATABASE_URL;
    else process.env.APP_DATABASE_URL = before;
  }
}
