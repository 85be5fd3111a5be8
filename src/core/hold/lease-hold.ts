import { Logger } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import type { DatabaseHost, Statement, StatementResult } from '../../hosts/database-host.js';
import type { IdempotentRequest } from '../../key/idempotent-request.js';
import type { StoredOutcomes } from '../../store/protect/stored-outcomes.js';
import type { StoredResponse } from '../../store/stored-response.js';
import type { Completion, KeyHold } from './key-hold.js';
import { COMPLETE_LEASE, RELEASE_LEASE, RENEW_LEASE } from '../../store/table/record.sql.js';
import type { CommittedEffect } from '../../hosts/execution-context.js';
import { IdempotencyError } from '../../idempotency.errors.js';

const logger = new Logger('Idempotency');

/**
 * Lease mode's hold: a committed `in_progress` row with `locked_until` and a fencing token.
 * Nothing holds a connection while the handler runs. While the holder is alive the lease is
 * renewed every third of its length (unless the route turned renewal off), so a slow handler
 * keeps its key; a holder that dies or stalls stops renewing, and a retry takes the key over
 * once the lease ends. The outcome is recorded, or the key released, only while the row still
 * carries this hold's token: a holder whose lease was taken over can never overwrite or delete
 * the newer holder's row.
 */
export class LeaseHold implements KeyHold {
  private ended = false;
  private renewal?: NodeJS.Timeout;
  private renewing = false;
  private readonly effects: CommittedEffect[] = [];

  constructor(
    /** Its statements run on the host's own pool, each bounded to a third of the lease. */
    private readonly host: DatabaseHost,
    private readonly request: IdempotentRequest,
    private readonly outcomes: StoredOutcomes,
    /** The fencing token written with the reservation. */
    readonly token: string,
    /** The lease's length; renewed every third of it when `renew`. */
    private readonly leaseMs: number,
    renew: boolean,
    /**
     * Told, after each renewal, until when the lease now runs at the least (`performance.now()`
     * time, taken before the renewal was sent, so never later than the row's `locked_until`).
     */
    private readonly onRenewed: (until: number) => void,
  ) {
    if (renew) {
      this.renewal = setInterval(() => void this.renew(), Math.max(1, Math.floor(leaseMs / 3)));
      this.renewal.unref();
    }
  }

  enterHandler<T>(start: () => T): T {
    return start();
  }

  get isOpen(): boolean {
    return !this.ended;
  }

  /**
   * Lease mode writes an effect (the outbox's staged messages, one per run) in the recording's own
   * statement (`withRecording()`), only while the lease holds; none when the work failed.
   */
  readonly addEffect = (effect: CommittedEffect): void => {
    if (this.ended) throw new IdempotencyError('the lease has ended: nothing more is written with its outcome');
    this.effects.push(effect);
  };

  async complete(response: StoredResponse, handlerFailed = false): Promise<Completion> {
    if (this.ended) return 'skipped';
    this.end();
    const { scope, fingerprint, ttlMs, tombstoneMs } = this.request;
    const [headers, body] = this.outcomes.columns(response, scope, fingerprint);
    const params = [
      scope.row.key,
      scope.row.caller,
      scope.row.endpoint,
      this.token,
      response.status,
      headers,
      body,
      ttlMs,
      tombstoneMs ?? null,
    ];
    const effect = handlerFailed ? undefined : this.effect();
    if (effect === undefined) {
      const { rowCount } = await this.run('recording the outcome', [COMPLETE_LEASE, params]);
      return rowCount === 1 ? 'recorded' : 'lost';
    }
    const { rows } = await this.run('recording the outcome', effect.withRecording([COMPLETE_LEASE, params]));
    if (rows[0].completed !== 1) return 'lost';
    effect.committed();
    return 'recorded';
  }

  async release(keepWrites = false): Promise<void> {
    if (this.ended) return;
    this.end();
    const effect = keepWrites ? this.effect() : undefined;
    if (effect !== undefined) {
      // The work's writes stay (a success not stored): its effect is written too, before the key is freed.
      await this.run('writing its effects', effect.statement());
      effect.committed();
    }
    const { key, caller, endpoint } = this.request.scope.row;
    await this.run('releasing the key', [RELEASE_LEASE, [key, caller, endpoint, this.token]]);
  }

  /** The run's effect, if any: lease mode writes one at most (the outbox adds one per run). */
  private effect(): CommittedEffect | undefined {
    if (this.effects.length > 1) throw new IdempotencyError('lease mode writes one effect per run');
    return this.effects[0];
  }

  /**
   * `statement` on lease mode's own connections, given up once it has not answered within a
   * third of the lease: a connection that died without a word (a lost NAT or load-balancer entry,
   * a failed-over host) never answers, and would otherwise hold the renewals, or the client's
   * answer, for as long as the operating system keeps the socket. A statement given up may still
   * have run; the fencing token keeps it harmless.
   */
  private run(what: string, statement: Statement): Promise<StatementResult> {
    return this.host.runOnOwnPool(what, statement, { timeoutMs: Math.max(1, Math.floor(this.leaseMs / 3)) });
  }

  /** Renews no more: the lease ends by itself, as a dead holder's does (the drain, past its bound). */
  stopRenewing(): void {
    clearInterval(this.renewal);
  }

  private end(): void {
    this.ended = true;
    clearInterval(this.renewal);
  }

  /** One renewal (skipped while the previous one is still running). */
  private async renew(): Promise<void> {
    if (this.ended || this.renewing) return;
    this.renewing = true;
    try {
      const { key, caller, endpoint } = this.request.scope.row;
      const sentAt = performance.now();
      // A renewal given up (see run) is tried again at the next third, on another connection,
      // instead of blocking every later renewal.
      const { rowCount } = await this.run('the renewal', [
        RENEW_LEASE,
        [key, caller, endpoint, this.token, this.leaseMs],
      ]);
      if (rowCount === 1) this.onRenewed(sentAt + this.leaseMs);
      else if (!this.ended) {
        clearInterval(this.renewal);
        logger.warn(
          'a lease-mode key was taken over by another request while its holder still ran; its outcome will not be recorded',
        );
      }
    } catch (error) {
      logger.error(`renewing a lease failed (retried at the next renewal): ${(error as Error).message}`);
    } finally {
      this.renewing = false;
    }
  }
}
