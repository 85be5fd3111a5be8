/** One request of a check: its headers (the caller's credentials, say) and its body. */
export interface ConformanceRequest {
  readonly headers?: Readonly<Record<string, string>>;
  /** Sent as JSON. */
  readonly body?: unknown;
}

/**
 * The route a team points the conformance kit at, in its own running app. Each check runs under a
 * `run` id of its own (a fresh UUID): the app's requests carry it where the app's rows keep it
 * (a reference field of the body, the caller of a bearer token), and `effects(run)` counts the
 * rows the app wrote for it, which is how the kit sees whether the business write happened.
 */
export interface ConformanceTarget {
  /** The route's absolute URL (`http://127.0.0.1:3000/payments`). */
  readonly url: string;
  /** Default: `'POST'`. */
  readonly method?: 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** A request the route accepts and executes (a 2xx), tagged with `run`. */
  request(run: string): ConformanceRequest;
  /** Another payload for the same operation (a changed amount): with a used key, a 422. */
  otherPayload(run: string): ConformanceRequest;
  /**
   * A request whose handler fails after its writes (a 4xx or 5xx it throws), tagged with `run`:
   * none of its writes may stay. Without it that check is skipped, and the report says so.
   */
  failing?(run: string): ConformanceRequest;
  /** How many of the app's business rows the requests of `run` wrote (committed). */
  effects(run: string): Promise<number>;
  /** Duplicates sent at once with one key. Default: `10`. */
  readonly duplicates?: number;
  /** A new, well-formed key for the route. Default: a random UUID. */
  newKey?(): string;
  /** A key the route refuses as malformed. Default: `'not a key'`. */
  readonly malformedKey?: string;
}

/** What one check found: `passed`, or the differences from what the module promises. */
export interface ConformanceCheck {
  readonly name: string;
  readonly passed: boolean;
  /** Why it failed, one sentence each; empty when it passed. */
  readonly failures: readonly string[];
  /**
   * Skipped: the target gave no `failing` request, or (the failed commit) the key was not committed
   * in the kit's process: the app runs in another process, or the route is in lease mode.
   */
  readonly skipped?: boolean;
}

/** Every check the kit ran against the route, in order. */
export interface ConformanceReport {
  readonly url: string;
  readonly checks: readonly ConformanceCheck[];
}
