/**
 * No attempt of an idempotent request got an HTTP answer (network errors, attempts that timed
 * out), or `init.signal` aborted it. Either way an attempt may have reached the server and run:
 * retry later with `key` to stay exactly-once, never with a new key.
 */
export class IdempotentRequestError extends Error {
  constructor(
    /** The Idempotency-Key every attempt carried: retry later with it to stay exactly-once. */
    readonly key: string,
    /** How many attempts were made. */
    readonly attempts: number,
    /** The last attempt's error, or the abort reason. */
    override readonly cause: unknown,
    /** `init.signal` aborted the operation (its reason is `cause`). */
    readonly aborted = false,
  ) {
    super(
      `nestjs-pg-idempotency/client: ${attempts} attempt(s) with Idempotency-Key ${key} ${aborted ? 'were aborted' : 'got no answer'} ` +
        `(${cause instanceof Error ? cause.message : String(cause)}); retry later with the same key`,
    );
    this.name = 'IdempotentRequestError';
  }
}
