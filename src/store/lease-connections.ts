import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { type PgClient, type PgResult, type PreparedStatement, runPreparedOnClient } from './combined-statements.js';
import { type DestroyableClient, destroyConnection, givenUpAfter } from './time-bound.js';

const logger = new Logger('Idempotency');

/** Connections lease mode keeps for its own statements; each takes about a millisecond. */
const LEASE_POOL_SIZE = 2;

/** What is used of a `pg` pool and its clients. */
interface PgPool {
  options: Record<string, unknown>;
  connect(): Promise<PooledClient>;
  end(): Promise<void>;
  on(event: 'error' | 'connect', listener: (arg: any) => void): unknown;
}

interface PooledClient extends PgClient, DestroyableClient {
  release(error?: Error | boolean): void;
}

/**
 * The connections lease mode keeps its rows with (renewals, the recording of an outcome, the
 * release of a key): a small pool of its own beside the DataSource's, to the same database with
 * the same settings, so that they never queue behind the app's requests for a connection (a
 * renewal waiting behind a busy pool let the lease end under its live holder, and a retry ran
 * the handler again). Each statement is bounded in time (`givenUpAfter`); the connection of one
 * given up is destroyed, so that it is not kept checked out.
 */
export class LeaseConnections {
  private pool?: PgPool;
  /** The app shut down: no statement is sent any more (a late one would open a pool nothing ends). */
  private closed = false;

  constructor(private readonly dataSource: DataSource) {}

  /** Runs `statement` alone, given up after `timeoutMs` (rejects with `what` in the message). */
  async run(what: string, statement: PreparedStatement, params: unknown[], timeoutMs: number): Promise<PgResult> {
    let givenUp = false;
    let client: PooledClient | undefined;
    const work = (async () => {
      const connected = await this.connections().connect();
      if (givenUp) {
        connected.release();
        throw new Error(`${what} was given up before it was sent`);
      }
      client = connected;
      let failure: Error | undefined;
      try {
        return await runPreparedOnClient(connected, this.dataSource, statement, params);
      } catch (error) {
        failure = error as Error;
        throw error;
      } finally {
        connected.release(failure ?? givenUp);
      }
    })();
    return givenUpAfter(what, timeoutMs, work, () => {
      givenUp = true;
      destroyConnection(client);
    });
  }

  /** Closes the pool (the app shuts down); a later statement fails. */
  async end(): Promise<void> {
    this.closed = true;
    const pool = this.pool;
    this.pool = undefined;
    await pool?.end();
  }

  private connections(): PgPool {
    if (this.pool) return this.pool;
    if (this.closed) throw new Error('nestjs-pg-idempotency: the app has shut down; lease-mode statements are no longer sent');
    const main = (this.dataSource.driver as unknown as { master?: PgPool }).master;
    if (!main?.options) throw new Error('nestjs-pg-idempotency: the DataSource must use the PostgreSQL driver (pg)');
    const Pool = main.constructor as new (options: Record<string, unknown>) => PgPool;
    const pool = new Pool({ ...main.options, max: LEASE_POOL_SIZE });
    pool.on('error', (error: Error) => logger.warn(`an idle lease-mode connection failed: ${error.message}`));
    // A connection destroyed while checked out reports its end as an error: already handled.
    pool.on('connect', (client: { on(event: 'error', listener: () => void): void }) => client.on('error', () => undefined));
    return (this.pool = pool);
  }
}
