import type { ExecutionOptions } from '../options/execution-settings.js';

/** What `@IdempotentJob()` reads of a BullMQ job (bullmq's `Job` has it). */
export interface JobLike {
  readonly id?: string;
  readonly name: string;
  readonly queueName: string;
  readonly data: unknown;
  /** Moves the job back to the delayed set until `timestamp` (ms since 1970), its attempts untouched. */
  moveToDelayed(timestamp: number, token?: string): Promise<void>;
}

/** Options of `@IdempotentJob()`; each has a default. */
export interface IdempotentJobOptions<Job extends JobLike = JobLike> extends ExecutionOptions {
  /**
   * The job's key: by default its id (a custom `jobId`, or BullMQ's own). A function of the job
   * derives it from the job's data instead (an order id), so that the same work added twice under
   * two job ids runs once.
   */
  key?: (job: Job) => string;
  /** What the key is for, in events and metrics. Default: the queue's name. */
  scope?: string;
  /** Whose key it is (a tenant): one caller's result is never given to another. Default: none. */
  caller?: (job: Job) => string;
  /**
   * What the job is about: the same key with another payload fails the job for good instead of
   * completing it with a result that was for something else. Default: the job's data.
   */
  payload?: (job: Job) => unknown;
  /**
   * How long a job whose key another run holds (or whose store is unavailable) waits, delayed,
   * before it is tried again (a held key: no sooner than its holder says, the lease's end or the
   * module's `retryAfterSeconds`); its attempts are untouched. Default: `1000` ms.
   */
  retryDelayMs?: number;
}
