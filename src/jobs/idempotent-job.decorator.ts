import { Inject } from '@nestjs/common';
import { IdempotencyService } from '../core/idempotency.service.js';
import type { RunOutcome } from '../core/run-outcome.js';
import { IdempotencyConfigurationError, IdempotencyError } from '../idempotency.errors.js';
import { aPositiveInteger, naming } from '../options/checks.js';
import { executionSettings } from '../options/execution-settings.js';
import { resolveModuleOptions } from '../options/settings.js';
import type { IdempotentJobOptions, JobLike } from './idempotent-job.options.js';

/** Where `@IdempotentJob()` has Nest inject the `IdempotencyService` into the processor. */
const SERVICE = Symbol('nestjs-pg-idempotency:job-service');

/**
 * Ends a job's run as BullMQ reads it, by the error's name (not its class): `DelayedError` leaves a
 * job that moved itself to the delayed set as it is (no attempt counted); `UnrecoverableError`
 * fails it without further attempts.
 */
class JobSettlement extends IdempotencyError {
  constructor(settlement: 'DelayedError' | 'UnrecoverableError', message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = settlement;
  }
}

/**
 * Makes a BullMQ processor's `process(job, token)` (a `WorkerHost` of `@nestjs/bullmq`) run each
 * job once per key, its writes in the key's transaction (through `IdempotencyTransaction`,
 * `TransactionHost`, `IdempotentDrizzle` or `IdempotentPrisma`, as in any keyed handler): a job
 * run again (stalled after its commit, retried, added twice) completes with the recorded result
 * without running. A job whose work failed throws its error (BullMQ retries it by its `attempts`);
 * one whose key another run holds, or whose store is unavailable, is delayed `retryDelayMs` (a held
 * key no sooner than its holder says: the lease's end, the module's `retryAfterSeconds`) without
 * an attempt counted; one whose key was used with another payload (or whose failure was recorded)
 * fails for good.
 */
export function IdempotentJob<Job extends JobLike = JobLike>(options: IdempotentJobOptions<Job> = {}): MethodDecorator {
  return (target, property, descriptor: PropertyDescriptor) => {
    const name = `${(target as object).constructor.name}.${String(property)}`;
    const retryDelayMs = checked(name, options);
    const process = descriptor.value as (job: Job, token?: string) => unknown;
    Inject(IdempotencyService)(target, SERVICE);
    descriptor.value = async function processOnce(this: Record<symbol, IdempotencyService>, job: Job, token?: string) {
      const {
        key = (job: Job) => job.id ?? '',
        scope,
        caller,
        payload = (job: Job) => job.data,
        ...execution
      } = options;
      const outcome = await this[SERVICE].run(
        {
          ...execution,
          scope: scope ?? job.queueName,
          key: key(job),
          caller: caller?.(job),
          payload: payload(job),
        },
        () => process.call(this, job, token),
      );
      return settle(outcome, job, token, retryDelayMs);
    };
    return descriptor;
  };
}

/** The options checked where the processor is declared; `retryDelayMs`, resolved. */
function checked(name: string, options: IdempotentJobOptions<never>): number {
  return naming(`@IdempotentJob() on ${name}`, () => {
    for (const option of ['key', 'caller', 'payload'] as const) {
      if (options[option] !== undefined && typeof options[option] !== 'function')
        throw new IdempotencyConfigurationError(`option "${option}" must be a function of the job`);
    }
    if (options.scope !== undefined && (typeof options.scope !== 'string' || options.scope === ''))
      throw new IdempotencyConfigurationError('option "scope" must be a non-empty string');
    executionSettings(resolveModuleOptions(), options);
    return options.retryDelayMs === undefined ? 1000 : aPositiveInteger(options.retryDelayMs, 'retryDelayMs');
  });
}

/** What the job comes to in BullMQ: its return value, or the error that retries, delays or fails it. */
async function settle(
  outcome: RunOutcome,
  job: JobLike,
  token: string | undefined,
  retryDelayMs: number,
): Promise<unknown> {
  switch (outcome.kind) {
    case 'executed':
    case 'replayed':
      return outcome.value;
    case 'tombstone':
      // Done long ago, its result gone: the job completes without running, with no value; a
      // failure recorded then fails it for good, as within the ttl.
      if (outcome.failed)
        throw new JobSettlement('UnrecoverableError', `job ${job.id}: its key failed before, long ago`);
      return undefined;
    case 'failed':
      throw outcome.error;
    case 'held':
    case 'lease-lost':
    case 'unavailable': {
      // A held key: no sooner than its holder says (the lease's end, the module's retryAfterSeconds).
      const delayMs =
        outcome.kind === 'held' && outcome.retryAfterSeconds
          ? Math.max(retryDelayMs, outcome.retryAfterSeconds * 1000)
          : retryDelayMs;
      await job.moveToDelayed(Date.now() + delayMs, token);
      throw new JobSettlement('DelayedError', `job ${job.id}: ${DELAYED[outcome.kind]}; tried again in ${delayMs} ms`);
    }
    case 'mismatch':
      throw new JobSettlement('UnrecoverableError', `job ${job.id}: its key was used with another payload`);
    case 'failure-recorded':
      throw new JobSettlement('UnrecoverableError', `job ${job.id} failed, and its failure was recorded`, {
        cause: outcome.error,
      });
    case 'failed-before':
      throw new JobSettlement('UnrecoverableError', `job ${job.id}: its key failed before: ${outcome.error}`);
  }
}

const DELAYED = {
  held: 'another run holds its key',
  'lease-lost': 'its lease was taken over',
  unavailable: 'the idempotency store is unavailable',
} as const;
