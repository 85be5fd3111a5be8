import { Inject, Injectable } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { ModuleReadiness } from '../gates/module-readiness.js';
import { type DrainedHold, KeyDrain } from '../gates/key-drain.js';
import { DatabaseHost } from '../../hosts/database-host.js';
import { IDEMPOTENCY_SETTINGS } from '../../idempotency.constants.js';
import type { IdempotencySettings, RouteSettings } from '../../options/settings.js';

import { LeaseHold } from '../hold/lease-hold.js';
import type { StoredOutcomes } from '../../store/protect/stored-outcomes.js';
import { KeyTable } from '../../store/table/key-table.js';
import { reserveLease } from './lease-reservation.js';
import { ReplayCache } from './replay-cache.js';
import { DatabaseUnavailableError, RefusedByDatabaseError } from '../../hosts/database-failures.js';
import { KEY_TABLE, KEY_TABLE_TOMBSTONES } from '../../store/table/module-tables.js';
import { TablesNotMigratedError } from '../../store/table/tables-not-migrated.error.js';
import type { IdempotentRequest } from '../../key/idempotent-request.js';
import type { ScopedKey } from '../../key/scoped-key.js';
import type { Refusal, Reservation } from './reservation.js';
import { ReservationsInFlight, sharedRefusal } from './reservations-in-flight.js';
import { reserveInTransaction } from './transactional-reservation.js';
import { TrackedHold } from './tracked-hold.js';

/** What reserving a key needs of its route or message handler: the mode, and lease mode's lease. */
export type ReservationRules = Pick<RouteSettings, 'mode' | 'leaseMs' | 'renewLease'>;

/**
 * Reserves keys in the route's mode, asking this instance's replay cache first: a completed
 * outcome or a key held here is answered without a round trip, and what PostgreSQL answers is
 * remembered. A request whose key this instance is reserving already waits for that reservation
 * and takes its refusal when the payload is the same (`ReservationsInFlight`). Expiries are measured
 * from the time taken before the reservation, so they never outlast the row's.
 */
@Injectable()
export class KeyReserver {
  private readonly cache: ReplayCache;
  private readonly inFlight = new ReservationsInFlight();
  private readonly outcomes: StoredOutcomes;

  constructor(
    @Inject(IDEMPOTENCY_SETTINGS) settings: IdempotencySettings,
    @Inject(DatabaseHost) private readonly host: DatabaseHost,
    private readonly table: KeyTable,
    private readonly drain: KeyDrain,
    private readonly readiness: ModuleReadiness,
  ) {
    this.cache = new ReplayCache(settings.replayCache);
    this.outcomes = settings.outcomes;
  }

  /**
   * The key's reservation, counted in flight for the drain (`KeyDrain`) from its start until it is
   * refused, or until its hold ends; once the drain began, `ShuttingDownError` (each attempt of wait
   * mode too). Before the module is ready (the application's bootstrap), it waits for it. A key
   * table no migration created is `TablesNotMigratedError`.
   */
  async reserve(request: IdempotentRequest, route: ReservationRules): Promise<Reservation> {
    const opening = this.readiness.whenReady();
    if (opening) await opening;
    const entry = this.drain.enter();
    try {
      const reservation = await this.reserveCounted(request, route, entry);
      if (reservation.kind !== 'held') this.drain.leave(entry);
      return reservation;
    } catch (error) {
      this.drain.leave(entry);
      throw error;
    }
  }

  /**
   * The recorded outcome this instance remembers for the request's key and payload (a replay), or
   * `mismatch` for another payload, decided at once, without a reservation; `undefined` when only
   * `reserve()` can decide (nothing remembered, the key held, the module not ready or draining).
   */
  remembered(request: IdempotentRequest): Refusal | undefined {
    if (!this.readiness.isReady || this.drain.isDraining) return undefined;
    const known = this.cache.lookup(request, performance.now());
    return known?.kind === 'completed' || known?.kind === 'mismatch' ? known : undefined;
  }

  /** Forgets what this instance remembers of `scope`'s outcome (the key console expired it). */
  evict(scope: ScopedKey): void {
    this.cache.evict(scope);
  }

  private async reserveCounted(
    request: IdempotentRequest,
    route: ReservationRules,
    entry: DrainedHold,
  ): Promise<Reservation> {
    const known = this.cache.lookup(request, performance.now());
    if (known) return known;
    // Wait on the reservation of this key in flight here, if any, and on the next one while each
    // settles with an answer for another payload; one that failed or took too long ends the wait.
    for (let inFlight = this.inFlight.of(request.scope); inFlight; inFlight = this.inFlight.of(request.scope)) {
      const answer = await inFlight;
      const learned = this.cache.lookup(request, performance.now()) ?? sharedRefusal(answer, request.fingerprint);
      if (learned) return learned;
      if (answer.kind === 'unknown') break;
    }
    return this.inFlight.lead(request, async () => {
      try {
        return await this.reserveInDatabase(request, route, entry);
      } catch (error) {
        if (connectionLost(error)) this.cache.forgetOutcomes();
        if (error instanceof RefusedByDatabaseError && error.sqlState === UNDEFINED_TABLE)
          throw new TablesNotMigratedError([`the key table is missing (${error.message})`], [KEY_TABLE], {
            cause: error,
          });
        if (error instanceof RefusedByDatabaseError && error.sqlState === UNDEFINED_COLUMN)
          throw new TablesNotMigratedError(
            [`the key table lacks a column (${error.message})`],
            [KEY_TABLE_TOMBSTONES],
            {
              cause: error,
            },
          );
        throw error;
      }
    });
  }

  private async reserveInDatabase(
    request: IdempotentRequest,
    route: ReservationRules,
    entry: DrainedHold,
  ): Promise<Reservation> {
    const startedAt = performance.now();
    const { scope, fingerprint } = request;
    const table = await this.table.strategy();
    if (route.mode === 'transactional') {
      const found = await reserveInTransaction(this.host, request, table, this.outcomes);
      if (found.kind !== 'held') return this.refused(found, request, startedAt);
      return {
        kind: 'held',
        hold: new TrackedHold(
          found.hold,
          request,
          startedAt,
          this.cache.hold(scope, fingerprint, Infinity),
          entry,
          this.cache,
          this.drain,
        ),
      };
    }
    const found = await reserveLease(this.host, request, route.leaseMs, table, this.outcomes);
    if (found.kind !== 'reserved') return this.refused(found, request, startedAt);
    // Held here no longer than the row is: its lease, renewed, but never past its expiry, after
    // which any request may take the row over.
    const local = this.cache.hold(scope, fingerprint, startedAt + route.leaseMs);
    const lease = new LeaseHold(
      this.host,
      request,
      this.outcomes,
      found.token,
      route.leaseMs,
      route.renewLease,
      (until) => local.extend(until),
    );
    entry.stopRenewing = () => lease.stopRenewing();
    return { kind: 'held', hold: new TrackedHold(lease, request, startedAt, local, entry, this.cache, this.drain) };
  }

  private refused(
    { expiresInMs, ...refusal }: Refusal & { expiresInMs?: number },
    request: IdempotentRequest,
    startedAt: number,
  ): Refusal {
    if (refusal.kind === 'completed')
      this.cache.remember(request.scope, request.fingerprint, refusal.response, startedAt + expiresInMs!);
    return refusal;
  }
}

/** The module's statements met a table no migration created. */
const UNDEFINED_TABLE = '42P01';
/** The module's statements met a key table created before the columns they use (tombstones'). */
const UNDEFINED_COLUMN = '42703';

/** What a lost connection (or a server that now only reads) looks like, the first sign of a failover. */
const LOST_CONNECTION_STATE = /^(08|57P0)|^25006$/;
const LOST_CONNECTION_CODE = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'EHOSTUNREACH']);

/**
 * Whether `error` says the connection to the database was lost or reached a server that now only
 * reads: the database behind the pool may be another one (a promoted standby), which may lack
 * outcomes this instance remembers (asynchronous replication). The replay cache then forgets
 * them, and the next duplicates read the table.
 */
function connectionLost(error: unknown): boolean {
  if (!(error instanceof DatabaseUnavailableError)) return false;
  if (error.sqlState !== undefined) return LOST_CONNECTION_STATE.test(error.sqlState);
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
  return (
    LOST_CONNECTION_CODE.has(String(cause?.code)) ||
    /connection terminated|connection ended|server closed the connection/i.test(String(cause?.message ?? ''))
  );
}
