/**
 * Keys whose next transactional commit fails on purpose, in this process: what the conformance
 * kit (`nestjs-pg-idempotency/testing`) arms to see whether a route's writes stay inside the key's
 * transaction (a write that committed on its own outlives the failed commit). Nothing else arms
 * it. Shared by both builds of the package through `Symbol.for`, as the kit may load the other one.
 */
export interface CommitFaults {
  /** Raw keys (as the client sent them) whose next commit fails. */
  readonly armed: Set<string>;
  /** Raw keys whose commit failed on purpose since they were armed. */
  readonly hit: Set<string>;
}

const COMMIT_FAULTS = Symbol.for('nestjs-pg-idempotency.commit-faults.v1');

/** The process's commit faults, when the kit created them; `undefined` in every app that never ran it. */
export function commitFaults(): CommitFaults | undefined {
  return (globalThis as { [COMMIT_FAULTS]?: CommitFaults })[COMMIT_FAULTS];
}

/** Whether the commit of `key` is to fail now (it was armed: the arming is used up). */
export function takeCommitFault(key: string): boolean {
  const faults = commitFaults();
  if (faults === undefined || !faults.armed.delete(key)) return false;
  faults.hit.add(key);
  return true;
}
