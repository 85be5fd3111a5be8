import { IdempotencyConfigurationError } from '../idempotency.errors.js';
/** A duration as milliseconds, or a string such as `'500ms'`, `'30s'`, `'15m'`, `'24h'`, `'7d'`. */
export type Duration = number | `${number}${'ms' | 's' | 'm' | 'h' | 'd'}`;

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/**
 * Whole milliseconds in `duration` (rounded: they are sent to PostgreSQL as integers); throws a
 * clear error for anything else, at bootstrap.
 */
export function toMilliseconds(duration: Duration, option: string): number {
  if (typeof duration === 'number' && Number.isFinite(duration) && duration >= 0) return wholeMilliseconds(duration);
  const match = typeof duration === 'string' ? /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(duration) : null;
  if (!match) {
    throw new IdempotencyConfigurationError(
      `option "${option}" must be milliseconds or a string like '24h', got ${String(duration)}`,
    );
  }
  return wholeMilliseconds(Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS]);
}

/** Rounded to whole milliseconds; a duration under half a millisecond but not 0 is 1, not 0. */
function wholeMilliseconds(ms: number): number {
  return ms > 0 && ms < 1 ? 1 : Math.round(ms);
}
