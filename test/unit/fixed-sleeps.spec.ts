import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The Jest suites wait for the condition they mean (docs/development.md, "Waiting in tests"): a
 * fixed sleep only proves that something does not happen within it, or that a ttl or a lease has
 * passed, or stands for a handler's work taking time. Their number only goes down: a new one
 * raises `CEILING` in the same commit, with the reason in its message.
 */
const CEILING = 25;

/**
 * The Jest suites' folders (test/support holds the polling helpers, `waitFor()` and `until()`; the
 * fault and failover harnesses are programs of their own).
 */
const SUITES = ['unit', 'e2e', 'partitioned', 'pooler'];

/** `await sleep(<a number or a constant>)`, or a `setTimeout(resolve, <a number>)` promise. */
const FIXED_SLEEP =
  /await sleep\(\s*([\d_]+|[A-Z_]+(?:\s*[+*]\s*[\d_]+)?)\s*\)|setTimeout\(\s*resolve\s*,\s*([\d_]+)\s*\)/;

/** A sleep in a loop that polls (on its line or the 4 before it) waits for a condition: not counted. */
const POLLING = /\b(?:while|for)\s*\(/;

function fixedSleeps(): string[] {
  return SUITES.flatMap((suite) =>
    (readdirSync(join('test', suite), { recursive: true }) as string[])
      .filter((file) => /\.(ts|mjs|cjs)$/.test(file) && file !== 'fixed-sleeps.spec.ts')
      .flatMap((file) => {
        const lines = readFileSync(join('test', suite, file), 'utf8').split('\n');
        return lines.flatMap((line, index) =>
          FIXED_SLEEP.test(line) && !lines.slice(Math.max(0, index - 4), index + 1).some((near) => POLLING.test(near))
            ? [`${suite}/${file}:${index + 1}`]
            : [],
        );
      }),
  );
}

describe('fixed sleeps in the Jest suites', () => {
  it(`are at most ${CEILING}, and this count sees them`, () => {
    const found = fixedSleeps();
    expect(found.length).toBeLessThanOrEqual(CEILING);
    expect(found).toContain('e2e/lease-renewal.spec.ts:188');
  });

  it('counts a fixed sleep and passes over a polling one', () => {
    expect(FIXED_SLEEP.test('    await sleep(1_100);')).toBe(true);
    expect(FIXED_SLEEP.test('await new Promise((resolve) => setTimeout(resolve, 300));')).toBe(true);
    expect(
      FIXED_SLEEP.test('if (payment.holdMs) await new Promise((resolve) => setTimeout(resolve, payment.holdMs));'),
    ).toBe(false);
    expect(POLLING.test('  while (!(await condition())) {')).toBe(true);
  });
});
