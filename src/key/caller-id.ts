import { IdempotencyConfigurationError } from '../idempotency.errors.js';

/**
 * The caller id a resolver returned, as text: `''` for nobody (`undefined`, `null`, `''`). Only
 * strings and finite numbers are ids; anything else (an object, `NaN`) would turn into the same
 * text for every caller (`"[object Object]"`, `"NaN"`) and let one caller receive another's
 * replays, so it fails the request before anything runs.
 */
export function callerIdOf(caller: unknown): string {
  if (caller === undefined || caller === null) return '';
  if (typeof caller === 'string') return caller;
  if ((typeof caller === 'number' && Number.isFinite(caller)) || typeof caller === 'bigint') return String(caller);
  throw new IdempotencyConfigurationError(
    `the caller resolver returned ${typeof caller === 'number' ? String(caller) : `a ${typeof caller}`}; it must return a string or ` +
      'a finite number identifying the caller, or undefined for nobody (see the "caller" option)',
  );
}
