/**
 * The delay before retry number `attempt` (1 after the first failure) with exponential backoff
 * and full jitter: a uniformly random time between 0 and `min(maxDelayMs, baseDelayMs × 2^(attempt-1))`.
 */
export function backoffDelayMs(attempt: number, baseDelayMs: number, maxDelayMs: number, random: () => number): number {
  const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
  return Math.floor(random() * ceiling);
}

/**
 * `Retry-After` in milliseconds: delay-seconds (`"2"`) or an HTTP-date; `undefined` when absent
 * or unreadable.
 */
export function retryAfterMs(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // An HTTP-date is always in GMT ("Sun, 06 Nov 1994 08:49:37 GMT"); anything else is not one.
  const date = /GMT$/.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
