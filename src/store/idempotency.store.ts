import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { getDataSourceToken } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { DataSource, type QueryRunner } from 'typeorm';
import { IDEMPOTENCY_SETTINGS } from '../idempotency.constants.js';
import type { IdempotencySettings } from '../idempotency.options.js';
import { IdempotencyConfigurationError } from '../idempotency.errors.js';
import type { KeyHold, KeyRequest } from './key-hold.js';
import { runPrepared, startTransactionWith, usePreparedStatements } from './combined-statements.js';
import { KeyLease } from './key-lease.js';
import { LeaseConnections } from './lease-connections.js';
import { KeyTransaction } from './key-transaction.js';
import { type LocalHold, LocalKeys } from './local-keys.js';
import { releaseBroken, rollbackAndRelease } from './release-query-runner.js';
import { scopeLockId } from './key-scope.js';
import { connectionOf, connectWithin, destroyConnection, givenUpAfter } from './time-bound.js';
import type { Reservation } from './reservation.js';
import { HANDLER_SAVEPOINT, INSERT_OUTCOME, KEY_ROW, LOCK_KEY, RESERVE_LEASE, TAKE_OVER } from './store.sql.js';

/** The row of a scoped key (KEY_ROW). */
interface KeyRow {
  fingerprint: Buffer;
  state: 'in_progress' | 'completed';
  status: number | null;
  response_headers: [string, string][] | null;
  response_body: Buffer | null;
  expired: boolean;
  /** Expired, or a lease that ended with this request's fingerprint. */
  takeable: boolean;
  lease_seconds_left: number | null;
  expires_in_ms: string;
}

/**
 * The PostgreSQL side of the module: reserves keys (inside the transaction that will carry the
 * handler's business writes, or under a lease) and records outcomes.
 */
@Injectable()
export class IdempotencyStore implements OnModuleInit, OnApplicationShutdown {
  private source?: DataSource;
  private readonly local: LocalKeys;
  /** Lease mode's own connections, opened at its first reservation. */
  private leaseConnections?: LeaseConnections;

  constructor(
    @Inject(IDEMPOTENCY_SETTINGS) private readonly settings: IdempotencySettings,
    private readonly moduleRef: ModuleRef,
  ) {
    this.local = new LocalKeys(settings.replayCache);
  }

  onModuleInit(): void {
    this.source = this.resolveDataSource();
    usePreparedStatements(this.source, this.settings.preparedStatements);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.leaseConnections?.end();
  }

  /** The DataSource holding `idempotency_keys` and the business tables. */
  get dataSource(): DataSource {
    return (this.source ??= this.resolveDataSource());
  }

  /**
   * Transactional mode: opens a transaction and takes the key's advisory lock in it; the key row
   * is inserted, with the outcome, just before the commit (`KeyTransaction`). The handler runs
   * after a savepoint, so that its writes can be undone without letting go of the lock. Unless
   * the result is `held`, the transaction is already closed and its connection released.
   */
  async reserve(request: KeyRequest): Promise<Reservation> {
    const startedAt = performance.now();
    const known = this.local.lookup(request.scope, request.fingerprint, startedAt);
    if (known) return known;
    const queryRunner = this.dataSource.createQueryRunner('master');
    try {
      const [[lock], [row]] = await startTransactionWith(
        queryRunner,
        [
          [LOCK_KEY, [scopeLockId(request.scope)]],
          [KEY_ROW, this.keyRowParams(request)],
        ],
        [TAKE_OVER, INSERT_OUTCOME],
        HANDLER_SAVEPOINT,
      );
      if (lock.locked === true && (row === undefined || (await this.takeOver(queryRunner, row as KeyRow, request)))) {
        const hold = new KeyTransaction(queryRunner, request);
        return { kind: 'held', hold: this.track(hold, request, startedAt, this.local.hold(request.scope, request.fingerprint, Infinity)) };
      }
      await rollbackAndRelease(queryRunner);
      return this.found(row, request, startedAt);
    } catch (error) {
      await rollbackAndRelease(queryRunner);
      throw error;
    }
  }

  /**
   * Whether the key's row, its lock taken, can be taken over by this request (expired, or a lease
   * that ended with this request's fingerprint): it is then deleted inside the key's transaction
   * (one more round trip, only then), and the handler's savepoint set again after the deletion.
   */
  private async takeOver(queryRunner: QueryRunner, row: KeyRow, request: KeyRequest): Promise<boolean> {
    if (!row.takeable) return false;
    const { rowCount } = await runPrepared(queryRunner, TAKE_OVER, this.keyRowParams(request), HANDLER_SAVEPOINT);
    if (rowCount === 1) return true;
    // Deleted meanwhile (the sweeper): with the key's lock held, no row means the key is free.
    const { rows } = await runPrepared(queryRunner, KEY_ROW, this.keyRowParams(request));
    return rows.length === 0;
  }

  /**
   * Lease mode: reserves the key in its own committed statement with a lease of `leaseMs` and a
   * fresh fencing token, renewed while the holder runs when `renew`. No connection is held while
   * the handler runs.
   */
  async reserveLease(request: KeyRequest, leaseMs: number, renew: boolean): Promise<Reservation> {
    const startedAt = performance.now();
    const known = this.local.lookup(request.scope, request.fingerprint, startedAt);
    if (known) return known;
    const token = randomBytes(8).readBigInt64BE(0).toString();
    const params = [...this.reserveParams(request), leaseMs, token];
    // Bounded as lease mode's other statements are: a reservation that gets no connection, or no
    // answer over a connection that died without a word, within a third of the lease is given up
    // (503); a connection it was sent over is destroyed.
    const bound = Math.max(1, Math.floor(leaseMs / 3));
    const queryRunner = this.dataSource.createQueryRunner('master');
    if (!(await connectWithin(queryRunner, bound))) throw new Error(`reserving the key got no connection within ${bound} ms`);
    let givenUp: Error | undefined;
    const bounded = <T>(work: Promise<T>) =>
      givenUpAfter('reserving the key', bound, work, () => {
        givenUp = new Error('reserving the key was given up');
        destroyConnection(connectionOf(queryRunner));
      });
    try {
      for (let attempt = 1; ; attempt++) {
        const reserved = await bounded(runPrepared(queryRunner, RESERVE_LEASE, params));
        if (reserved.rows.length === 1) {
          // Held here no longer than the row is: its lease, renewed, but never past its expiry,
          // after which any request may take the row over.
          const local = this.local.hold(request.scope, request.fingerprint, startedAt + leaseMs);
          this.leaseConnections ??= new LeaseConnections(this.dataSource);
          const lease = new KeyLease(this.leaseConnections, request, token, leaseMs, renew, (until) => local.extend(until));
          return { kind: 'held', hold: this.track(lease, request, startedAt, local) };
        }
        const { rows } = await bounded(runPrepared(queryRunner, KEY_ROW, this.keyRowParams(request)));
        const row = rows[0] as KeyRow | undefined;
        // The two statements read `now()` apart: a row that expired (or a lease that ended) in
        // between, or one deleted meanwhile, is the key free now, not a request in flight.
        if (attempt < 3 && (row === undefined || row.takeable)) continue;
        return this.found(row, request, startedAt);
      }
    } finally {
      await (givenUp ? releaseBroken(queryRunner, givenUp) : queryRunner.release());
    }
  }

  private reserveParams({ scope, fingerprint, ttlMs }: KeyRequest): unknown[] {
    return [scopeLockId(scope), scope.key, scope.caller, scope.endpoint, fingerprint, ttlMs];
  }

  private keyRowParams({ scope, fingerprint }: KeyRequest): unknown[] {
    return [scope.key, scope.caller, scope.endpoint, fingerprint];
  }

  /**
   * What a reservation that did not get the key found in its place: no live row means another
   * transaction holds the key uncommitted (expired rows count as absent).
   */
  private found(row: KeyRow | undefined, { scope, fingerprint }: KeyRequest, startedAt: number): Reservation {
    if (!row || row.expired) return { kind: 'in-progress' };
    if (!row.fingerprint.equals(fingerprint)) return { kind: 'mismatch' };
    if (row.state !== 'completed') {
      return { kind: 'in-progress', retryAfterSeconds: Math.max(1, row.lease_seconds_left ?? 1) };
    }
    const response = { status: row.status!, headers: row.response_headers ?? [], body: row.response_body ?? Buffer.alloc(0) };
    this.local.remember(scope, fingerprint, response, startedAt + Number(row.expires_in_ms));
    return { kind: 'completed', response };
  }

  /**
   * Keeps this instance's knowledge of a held key: duplicates arriving here are answered without
   * a round trip while it is held (`held`, this instance's mark on it), and a recorded outcome is
   * remembered for replays. Expiries are measured from `startedAt`, taken before the
   * reservation, so they never outlast the row's.
   */
  private track(hold: KeyHold, request: KeyRequest, startedAt: number, held: LocalHold): KeyHold {
    const { scope, fingerprint, ttlMs } = request;
    const local = this.local;
    return {
      get manager() {
        return hold.manager;
      },
      get isOpen() {
        return hold.isOpen;
      },
      async complete(response, handlerFailed) {
        try {
          const completion = await hold.complete(response, handlerFailed);
          if (completion === 'recorded') local.remember(scope, fingerprint, response, startedAt + ttlMs);
          return completion;
        } finally {
          held.end();
        }
      },
      async release(keepWrites) {
        try {
          await hold.release(keepWrites);
        } finally {
          held.end();
        }
      },
    };
  }

  private resolveDataSource(): DataSource {
    const { dataSource } = this.settings;
    if (dataSource instanceof DataSource) return dataSource;
    try {
      return this.moduleRef.get<DataSource>(getDataSourceToken(dataSource), { strict: false });
    } catch {
      throw new IdempotencyConfigurationError(
        `no TypeORM DataSource named "${dataSource}" was found. Import TypeOrmModule.forRoot() ` +
          `(with that name) before IdempotencyModule, or pass { dataSource } to IdempotencyModule.forRoot().`,
      );
    }
  }
}
