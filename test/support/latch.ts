/**
 * Latches that keep a fixture's handler at one point until its test lets it go on, so that a test
 * knows the holder is there (its key reserved, its writes sent) instead of guessing it from a
 * clock. The lab apps run in the test's process and share this module with it: the handler awaits
 * `hold(name)`; the test awaits `entered(name)`, does what needs the holder in place, then calls
 * `release(name)`. A name is the test's own (a caller or a key: unique per test). Apps in processes
 * of their own cannot share it: their tests wait on the database's state (`until()` in
 * ./database.ts). Every latch is released after each test (./after-each-file.ts), so that a test
 * that failed leaves no handler waiting.
 */

/** How long a hold waits for its release: a bound reached only when the test never releases it. */
const HOLD_BOUND_MS = 30_000;
/** How long `entered` waits: as `until()`, far above what a machine three times slower needs. */
const ENTERED_BOUND_MS = 20_000;

interface Latch {
  entries: number;
  released: boolean;
  /** Holds waiting for the release. */
  holds: Array<() => void>;
  /** Tests waiting for a number of entries. */
  watchers: Array<{ times: number; resolve: () => void }>;
}

const latches = new Map<string, Latch>();

function latch(name: string): Latch {
  let found = latches.get(name);
  if (!found) latches.set(name, (found = { entries: 0, released: false, holds: [], watchers: [] }));
  return found;
}

/**
 * In a handler: waits until the test releases `name` (at once when it already did). Fails after
 * 30 s, so that a handler never outlives its test by much.
 */
export function hold(name: string): Promise<void> {
  const found = latch(name);
  found.entries += 1;
  for (const watcher of found.watchers.filter(({ times }) => found.entries >= times)) {
    found.watchers.splice(found.watchers.indexOf(watcher), 1);
    watcher.resolve();
  }
  if (found.released) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the latch "${name}" was not released within ${HOLD_BOUND_MS / 1000} s`)),
      HOLD_BOUND_MS,
    );
    timer.unref();
    found.holds.push(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** Resolves once handlers have entered `hold(name)` `times` times in all; fails after 20 s. */
export function entered(name: string, times = 1): Promise<void> {
  const found = latch(name);
  if (found.entries >= times) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      found.watchers.splice(found.watchers.indexOf(watcher), 1);
      reject(
        new Error(
          `${times} hold(s) of "${name}" were not entered within ${ENTERED_BOUND_MS / 1000} s (${found.entries} were)`,
        ),
      );
    }, ENTERED_BOUND_MS);
    const watcher = {
      times,
      resolve: () => {
        clearTimeout(timer);
        resolve();
      },
    };
    found.watchers.push(watcher);
  });
}

/** How many times handlers have entered `hold(name)` so far. */
export function entries(name: string): number {
  return latches.get(name)?.entries ?? 0;
}

/** How many handlers sit in `hold(name)` now, waiting for its release. */
export function waiting(name: string): number {
  return latches.get(name)?.holds.length ?? 0;
}

/** Lets every hold of `name` go on; later holds of it pass at once. */
export function release(name: string): void {
  const found = latch(name);
  found.released = true;
  for (const go of found.holds.splice(0)) go();
}

/** Releases every latch and forgets them all. */
export function releaseAll(): void {
  for (const name of latches.keys()) release(name);
  latches.clear();
}
