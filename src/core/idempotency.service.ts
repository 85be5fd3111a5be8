import { Inject, Injectable } from '@nestjs/common';
import { IDEMPOTENCY_SETTINGS } from '../idempotency.constants.js';
import { IdempotencyConfigurationError } from '../idempotency.errors.js';
import { naming } from '../options/checks.js';
import { defined, type ExecutionOptions, executionSettings } from '../options/execution-settings.js';
import type { IdempotencySettings } from '../options/settings.js';
import type { IdempotentRequest } from '../key/idempotent-request.js';
import { MAX_CALLER_BYTES, MAX_ENDPOINT_LENGTH } from '../key/key-limits.js';
import { buildRequest, ENDPOINT_PREFIXES, isRefusal } from '../key/request-builder.js';
import { ExactlyOnce } from './exactly-once.js';
import { type FailurePolicy, RELEASE_EVERY_FAILURE, type RunRules } from './run-rules.js';
import { payloadFingerprint } from '../key/payload-fingerprint.js';
import type { RunOutcome } from './run-outcome.js';

/** What `IdempotencyService.run()` runs once: the work's name, its key, and what the key guarantees. */
export interface IdempotentCall extends ExecutionOptions {
  /**
   * What the key is for: the operation (`'nightly-report'`, `'charge-card'`). Keys of two scopes
   * never meet; the scope also names the work in events and metrics (keep it free of ids).
   */
  scope: string;
  /** The key: in one scope, for one caller, the work runs once per key (1 to 255 printable ASCII characters). */
  key: string;
  /** Whose key it is (a tenant, a user): one caller's result is never given to another. Default: none. */
  caller?: string;
  /**
   * What the call is about (JSON data): the same key with another payload is refused (`mismatch`)
   * instead of answered with a result that was for something else. Default: none.
   */
  payload?: unknown;
  /**
   * Whether a failure of the work is recorded, so that later calls with the key get `failed-before`
   * and never run it again (its writes are undone either way). `false` (the default) frees the key:
   * a later call runs the work again. A failure of the store's (the database unavailable, a race
   * lost) is never recorded.
   */
  recordFailure?: boolean | ((error: unknown) => boolean);
}

/** The results of {@link IdempotencyService.run}: what happened, and the result where there is one. */
export type IdempotentCallResult<T> = RunOutcome<T>;

const RECORD_EVERY_FAILURE: FailurePolicy = { recordFailure: () => true, attempts: 1 };

/**
 * Runs any function once per key, for any entry: a scheduled job, a webhook, a script, a service
 * a controller and a consumer both call. In transactional mode (the default) the function's
 * database writes, through the module's tools (`IdempotencyTransaction`, `TransactionHost`,
 * `IdempotentDrizzle`, `IdempotentPrisma`), commit in one transaction with the key and its
 * recorded result, or not at all; in lease mode the key is leased while the function calls out.
 * Every call with the key afterwards gets the recorded result without running it.
 *
 * ```ts
 * const result = await idempotency.run({ scope: 'nightly-report', key: day }, () => reports.build(day));
 * if (result.kind === 'executed' || result.kind === 'replayed') return result.value;
 * ```
 *
 * The result is recorded as JSON: the first call gets the value the function returned, later
 * calls its JSON (a `Date` comes back as its text).
 */
@Injectable()
export class IdempotencyService {
  constructor(
    @Inject(IDEMPOTENCY_SETTINGS) private readonly settings: IdempotencySettings,
    private readonly core: ExactlyOnce,
  ) {}

  /**
   * Runs `work` once for `call.key` in `call.scope`, or tells why it did not run (another run holds
   * the key, the key was used with another payload, the store is unavailable). An invalid call
   * (no key, a key or caller a row cannot hold, an invalid option)
   * rejects with `IdempotencyConfigurationError`; a failure of `work` is returned, not thrown (`failed`).
   */
  async run<T>(call: IdempotentCall, work: () => T | Promise<T>): Promise<IdempotentCallResult<Awaited<T>>> {
    const { request, rules, policy } = this.read(call);
    const outcome = await this.core.run(request, rules, work, policy);
    // A held key always says when to try again: the lease's end when known, else the module's delay.
    if (outcome.kind === 'held' && outcome.retryAfterSeconds === undefined)
      return { kind: 'held', retryAfterSeconds: this.settings.retryAfterSeconds };
    return outcome;
  }

  private read(call: IdempotentCall): { request: IdempotentRequest; rules: RunRules; policy: FailurePolicy } {
    return naming(`IdempotencyService.run() in scope ${JSON.stringify(call?.scope)}`, () => {
      const { scope, key, caller = '', payload, recordFailure = false } = call;
      const wrongScope = `the scope must be a name of 1 to ${MAX_ENDPOINT_LENGTH - ENDPOINT_PREFIXES.call.length} bytes`;
      if (typeof scope !== 'string' || scope === '') throw new IdempotencyConfigurationError(wrongScope);
      const execution = executionSettings(this.settings, defined(call));
      const request = buildRequest({
        key,
        caller,
        anonymous: 'shared',
        endpoint: { prefix: ENDPOINT_PREFIXES.call, name: scope },
        ttlMs: execution.ttlMs,
        tombstoneMs: execution.tombstoneMs,
        keyStorage: this.settings.keyStorage,
        fingerprint: () => payloadFingerprint(payload),
      });
      if (isRefusal(request)) {
        switch (request.refused) {
          case 'key':
            throw new IdempotencyConfigurationError(
              `the key ${request.problem === 'missing' ? 'is missing' : request.problem}`,
            );
          case 'endpoint':
            throw new IdempotencyConfigurationError(wrongScope);
          default:
            throw new IdempotencyConfigurationError(
              `the caller is not a string of at most ${MAX_CALLER_BYTES} bytes that PostgreSQL can store`,
            );
        }
      }
      const policy =
        typeof recordFailure === 'function'
          ? { recordFailure, attempts: 1 }
          : recordFailure
            ? RECORD_EVERY_FAILURE
            : RELEASE_EVERY_FAILURE;
      return { request, rules: { handler: scope, ...execution }, policy };
    });
  }
}
