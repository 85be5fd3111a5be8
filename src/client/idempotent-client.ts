import { backoffDelayMs, retryAfterMs } from './backoff.js';
import { IdempotentRequestError } from './idempotent-request.error.js';
import { uuidv7 } from './uuidv7.js';

/** How an {@link IdempotentClient} retries. Every field has a default. */
export interface IdempotentClientOptions {
  /** Attempts per logical operation, the first included. Default: `5`. */
  maxAttempts?: number;
  /** Backoff base: the ceiling of the first retry's random delay. Default: `100` ms. */
  baseDelayMs?: number;
  /**
   * Ceiling of every backoff delay. A `Retry-After` longer than this ends the retries and the
   * response is returned as it is. Default: `10000` ms.
   */
  maxDelayMs?: number;
  /** Makes the key of each logical operation. Default: {@link uuidv7}. */
  generateKey?: () => string;
  /** The `fetch` to use. Default: `globalThis.fetch`. */
  fetch?: typeof fetch;
  /**
   * How long one attempt may take before it is given up and retried with the same key (a
   * network error, as far as retries go). Default: none (an attempt waits as long as `fetch`).
   */
  attemptTimeoutMs?: number;
  /** Random numbers in [0, 1) for the jitter. Default: `Math.random`. */
  random?: () => number;
  /** Called before each retry (for logs and metrics). */
  onRetry?: (retry: RetryInfo) => void;
}

/** What is about to be retried, and when. */
export interface RetryInfo {
  key: string;
  /** The attempt that failed (1 for the first). */
  attempt: number;
  delayMs: number;
  /** The answer (409, 5xx) or the network error of that attempt. */
  reason: Response | unknown;
}

/** `fetch` options plus the operation's key, when the caller has one already. */
export interface IdempotentRequestInit extends RequestInit {
  /** The key of this logical operation. Default: a new one (`generateKey`). */
  idempotencyKey?: string;
}

/** The final answer of a logical operation. */
export interface IdempotentResult {
  response: Response;
  /** The server answered with a stored outcome (`Idempotent-Replayed: true`). */
  replayed: boolean;
  /** The Idempotency-Key every attempt carried. */
  key: string;
  attempts: number;
}

const KEY_HEADER = 'Idempotency-Key';
const REPLAYED_HEADER = 'Idempotent-Replayed';

/**
 * A `fetch` for unsafe requests that retries safely: one Idempotency-Key per logical operation
 * (a UUID v7 by default), the same key on every attempt, exponential backoff with full jitter.
 * - network errors and 5xx answers are retried; so is a 409 (the first attempt still runs);
 * - `Retry-After` (on a 409 or a 503, or any retried answer) is honoured: never retried sooner;
 * - other 4xx answers are final, never retried;
 * - the answer says whether it was a replay of an earlier attempt's outcome.
 *
 * No NestJS dependency; works in Node.js ≥ 20 and browsers (in a browser, the server must expose
 * `Idempotent-Replayed` and `Retry-After` through CORS: see `withIdempotencyCors()`).
 */
export class IdempotentClient {
  private readonly maxAttempts: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly generateKey: () => string;
  private readonly fetchImpl: typeof fetch;
  private readonly random: () => number;
  private readonly attemptTimeoutMs?: number;
  private readonly onRetry?: (retry: RetryInfo) => void;

  constructor(options: IdempotentClientOptions = {}) {
    this.maxAttempts = Math.floor(atLeast(options.maxAttempts ?? 5, 1, 'maxAttempts'));
    this.baseDelayMs = atLeast(options.baseDelayMs ?? 100, 0, 'baseDelayMs');
    this.maxDelayMs = atLeast(options.maxDelayMs ?? 10_000, 0, 'maxDelayMs');
    this.generateKey = options.generateKey ?? uuidv7;
    // Called as a plain function, never as a method of this client: a browser's `window.fetch`
    // throws "Illegal invocation" when called on another object.
    const given = options.fetch;
    this.fetchImpl = given ? (input, init) => given(input, init) : (input, init) => globalThis.fetch(input, init);
    this.random = options.random ?? Math.random;
    if (options.attemptTimeoutMs !== undefined)
      this.attemptTimeoutMs = atLeast(options.attemptTimeoutMs, 1, 'attemptTimeoutMs');
    this.onRetry = options.onRetry;
  }

  /**
   * Sends the request until it gets a final answer or runs out of attempts. Resolves with the
   * last answer (even a 5xx once attempts are spent); rejects with an
   * {@link IdempotentRequestError} carrying the key when no attempt got an answer, or when
   * `init.signal` aborts (`aborted: true`): an attempt may have run on the server either way.
   */
  async fetch(input: string | URL, init: IdempotentRequestInit = {}): Promise<IdempotentResult> {
    const { idempotencyKey, ...requestInit } = init;
    if (isStream(requestInit.body)) {
      throw new TypeError(
        'nestjs-pg-idempotency/client: a stream body cannot be sent again on a retry; pass a string, bytes, Blob or FormData',
      );
    }
    const headers = new Headers(requestInit.headers);
    const key = headers.get(KEY_HEADER) ?? idempotencyKey ?? this.generateKey();
    headers.set(KEY_HEADER, key);
    const signal = requestInit.signal ?? undefined;
    for (let attempt = 1; ; attempt++) {
      let response: Response;
      try {
        response = await this.attempt(input, { ...requestInit, headers }, signal);
      } catch (error) {
        if (signal?.aborted) throw new IdempotentRequestError(key, attempt, signal.reason, true);
        if (attempt >= this.maxAttempts) throw new IdempotentRequestError(key, attempt, error);
        await this.pause({ key, attempt, reason: error, delayMs: this.backoff(attempt) }, signal);
        continue;
      }
      const retryable = response.status === 409 || response.status >= 500;
      const delayMs = retryable ? this.delayFor(response, attempt) : undefined;
      if (delayMs === undefined || attempt >= this.maxAttempts) {
        return { response, replayed: response.headers.get(REPLAYED_HEADER) === 'true', key, attempts: attempt };
      }
      await response.body?.cancel().catch(() => undefined);
      await this.pause({ key, attempt, reason: response, delayMs }, signal);
    }
  }

  /** The wait before retrying `response`; `undefined` when its Retry-After is too long to wait. */
  private delayFor(response: Response, attempt: number): number | undefined {
    const asked = retryAfterMs(response.headers.get('Retry-After'));
    if (asked === undefined) return this.backoff(attempt);
    if (asked > this.maxDelayMs) return undefined;
    // Never sooner than asked; a little jitter on top so that many clients do not come back at once.
    return asked + Math.floor(this.random() * this.baseDelayMs);
  }

  private backoff(attempt: number): number {
    return backoffDelayMs(attempt, this.baseDelayMs, this.maxDelayMs, this.random);
  }

  /**
   * One attempt, under the operation's signal and, when set, the attempt's own timeout, which
   * bounds the wait for the answer only: once the answer came, its body is the caller's to read
   * (a timer still attached would abort reading a 201 that arrived in time).
   */
  private async attempt(input: string | URL, init: RequestInit, signal: AbortSignal | undefined): Promise<Response> {
    if (this.attemptTimeoutMs === undefined) return this.fetchImpl(input, { ...init, signal });
    const timeout = new AbortController();
    const timer = setTimeout(
      () => timeout.abort(new DOMException('the attempt timed out', 'TimeoutError')),
      this.attemptTimeoutMs,
    );
    try {
      return await this.fetchImpl(input, {
        ...init,
        signal: signal ? AbortSignal.any([signal, timeout.signal]) : timeout.signal,
      });
    } finally {
      clearTimeout(timer);
    }
  }

  /** Waits before a retry; an abort meanwhile ends the operation with its key. */
  private async pause(retry: RetryInfo, signal?: AbortSignal): Promise<void> {
    this.onRetry?.(retry);
    try {
      await sleep(retry.delayMs, signal);
    } catch (reason) {
      throw new IdempotentRequestError(retry.key, retry.attempt, reason, true);
    }
  }
}

/** One idempotent request with a default {@link IdempotentClient} (or one built from `options`). */
export function idempotentFetch(
  input: string | URL,
  init?: IdempotentRequestInit,
  options?: IdempotentClientOptions,
): Promise<IdempotentResult> {
  return new IdempotentClient(options).fetch(input, init);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A web `ReadableStream`, or anything `fetch` reads as it goes (a Node `Readable`, an async iterable). */
function isStream(body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false;
  return (
    typeof (body as { getReader?: unknown }).getReader === 'function' ||
    typeof (body as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function'
  );
}

function atLeast(value: number, min: number, option: string): number {
  if (!Number.isFinite(value) || value < min) {
    throw new RangeError(`nestjs-pg-idempotency/client: option "${option}" must be a number ≥ ${min}, got ${value}`);
  }
  return value;
}
