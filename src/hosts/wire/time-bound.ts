import { IdempotencyError } from '../../idempotency.errors.js';
/** A statement of the module's given up: it did not answer within its bound, or the app is shutting down. */
export class StatementTimeoutError extends IdempotencyError {}

/**
 * `work`, given up after `timeoutMs` or when `signal` aborts: `onGiveUp` runs (it destroys the
 * connection the work runs on, so that the pool drops it instead of keeping it checked out), and
 * the result rejects with a `StatementTimeoutError` that names `what`. A connection that died without a word (a lost
 * NAT or load-balancer entry, a failed-over host) never answers: without a bound, a statement on
 * it waits for as long as the operating system keeps the socket. What `work` does after it was
 * given up is ignored.
 */
export async function givenUpAfter<T>(
  what: string,
  { timeoutMs, signal }: { timeoutMs: number; signal?: AbortSignal },
  work: Promise<T>,
  onGiveUp: () => void,
): Promise<T> {
  work.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const givenUp = new Promise<never>((_, reject) => {
    const giveUp = (why: string) => {
      onGiveUp();
      reject(new StatementTimeoutError(`${what} ${why}`));
    };
    timer = setTimeout(() => giveUp(`did not answer within ${timeoutMs} ms`), timeoutMs);
    if (signal) {
      onAbort = () => giveUp('was given up: the app is shutting down');
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    }
  });
  try {
    return await Promise.race([work, givenUp]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
}
