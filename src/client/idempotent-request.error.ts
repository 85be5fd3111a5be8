/** Every attempt of an idempotent request failed without an HTTP answer (network errors). */
export class IdempotentRequestError extends Error {
  constructor(
    /** The Idempotency-Key every attempt carried: retry later with it to stay exactly-once. */
    readonly key: string,
    /** How many attempts were made. */
    readonly attempts: number,
    /** The last attempt's error. */
    override readonly cause: unknown,
  ) {
    super(
      `nestjs-pg-idempotency/client: ${attempts} attempt(s) with Idempotency-Key ${key} got no answer ` +
        `(${cause instanceof Error ? cause.message : String(cause)}); retry later with the same key`,
    );
    this.name = 'IdempotentRequestError';
  }
}
