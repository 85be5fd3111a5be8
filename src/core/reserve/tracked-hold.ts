import type { CommittedEffect } from '../../hosts/execution-context.js';
import type { IdempotentRequest } from '../../key/idempotent-request.js';
import type { StoredResponse } from '../../store/stored-response.js';
import type { Completion, KeyHold } from '../hold/key-hold.js';
import type { DrainedHold, KeyDrain } from '../gates/key-drain.js';
import type { LocalHold, ReplayCache } from './replay-cache.js';

/**
 * A hold that keeps this instance's knowledge of its key: duplicates arriving here are answered
 * without a round trip while it is held (`held`, this instance's mark on it), and a recorded
 * outcome is remembered for replays, until `startedAt + ttlMs`. Its end is the end of its key's
 * flight (`entry`). A class, its getters the class's: V8 makes an object literal's getters anew
 * for each literal, in the old generation, and what they capture then survives every scavenge.
 */
export class TrackedHold implements KeyHold {
  readonly addEffect?: (effect: CommittedEffect) => void;

  constructor(
    private readonly hold: KeyHold,
    private readonly request: IdempotentRequest,
    private readonly startedAt: number,
    private readonly held: LocalHold,
    private readonly entry: DrainedHold,
    private readonly cache: ReplayCache,
    private readonly drain: KeyDrain,
  ) {
    this.addEffect = hold.addEffect;
  }

  get handle(): unknown {
    return this.hold.handle;
  }

  get isOpen(): boolean {
    return this.hold.isOpen;
  }

  enterHandler<T>(start: () => T, settled: Promise<void>): T {
    return this.hold.enterHandler(start, settled);
  }

  async complete(response: StoredResponse, handlerFailed: boolean): Promise<Completion> {
    try {
      const completion = await this.hold.complete(response, handlerFailed);
      if (completion === 'recorded') {
        const { scope, fingerprint, ttlMs } = this.request;
        this.cache.remember(scope, fingerprint, response, this.startedAt + ttlMs);
      }
      return completion;
    } finally {
      this.ended();
    }
  }

  async release(keepWrites?: boolean): Promise<void> {
    try {
      await this.hold.release(keepWrites);
    } finally {
      this.ended();
    }
  }

  private ended(): void {
    this.held.end();
    this.drain.leave(this.entry);
  }
}
