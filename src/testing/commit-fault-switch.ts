/**
 * Arms the module's commit faults (`core/hold/commit-faults.ts`, reached through the same
 * `Symbol.for` from either build of the package): the next transactional commit of an armed key,
 * in this process, fails as a database failure would, after the handler's writes.
 */
interface CommitFaults {
  readonly armed: Set<string>;
  readonly hit: Set<string>;
}

const COMMIT_FAULTS = Symbol.for('nestjs-pg-idempotency.commit-faults.v1');

function faults(): CommitFaults {
  const global = globalThis as { [COMMIT_FAULTS]?: CommitFaults };
  global[COMMIT_FAULTS] ??= { armed: new Set(), hit: new Set() };
  return global[COMMIT_FAULTS];
}

/** The next commit of `key` in this process fails. */
export function armCommitFault(key: string): void {
  faults().armed.add(key);
}

/** Disarms `key`: whether its commit failed on purpose since it was armed. */
export function disarmCommitFault(key: string): boolean {
  const { armed, hit } = faults();
  armed.delete(key);
  return hit.delete(key);
}
