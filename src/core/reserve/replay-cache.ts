import type { ReplayCacheLimits } from '../../options/settings.js';
import type { ScopedKey } from '../../key/scoped-key.js';
import type { StoredResponse } from '../../store/stored-response.js';
import type { Refusal } from './reservation.js';

interface Completed {
  fingerprint: Buffer;
  response: StoredResponse;
  expiresAt: number;
  bytes: number;
  /** The cache's count of writes when this outcome was remembered or last moved behind the newest. */
  written: number;
}

/** This instance's hold on a key, as `ReplayCache.hold()` returns it. */
export interface LocalHold {
  /** The key stays held here until `until` (a renewed lease's new end), if that is later. */
  extend(until: number): void;
  end(): void;
}

interface InFlight {
  fingerprint: Buffer;
  /** Until when this instance holds the key (a lease's end; Infinity for a transaction). */
  heldUntil: number;
}

/**
 * What this instance knows about keys without asking PostgreSQL: the keys it holds right now,
 * and a bounded cache of completed outcomes, the least recently used evicted first (a replay
 * counts as a use once the outcome is in the older half of the cache: `keepRecent`). A completed
 * outcome never changes until it expires, so replaying it from memory is exact as long as scope,
 * fingerprint and expiry are honoured; expiries are computed so that they never outlast the
 * row's. Duplicates of a key held here are answered without a round trip too.
 */
export class ReplayCache {
  private readonly completed = new Map<string, Completed>();
  private readonly inFlight = new Map<string, InFlight>();
  private bytes = 0;
  /** Outcomes remembered or moved behind the newest, counted. */
  private writes = 0;

  constructor(private readonly limits: ReplayCacheLimits | false) {}

  /**
   * What is known here about the request's scope at `now`, or `undefined` when PostgreSQL must be
   * asked; the request's fingerprint is read only where it decides the answer. Every time here
   * (`now`, `heldUntil`, `expiresAt`) is on the `performance.now()` clock.
   */
  lookup(request: { readonly scope: ScopedKey; readonly fingerprint: Buffer }, now: number): Refusal | undefined {
    const id = request.scope.text;
    const held = this.inFlight.get(id);
    if (held && held.heldUntil > now) {
      // Another payload meets a lease's row (422, as PostgreSQL would answer); a transaction's row
      // does not exist yet, and may never (a failed handler frees the key): 409, as on any other
      // instance, never a 422 that tells the client the key is spent.
      if (held.heldUntil !== Infinity && !held.fingerprint.equals(request.fingerprint)) return { kind: 'mismatch' };
      const left = held.heldUntil === Infinity ? undefined : Math.max(1, Math.ceil((held.heldUntil - now) / 1000));
      return { kind: 'in-progress', retryAfterSeconds: left };
    }
    const entry = this.completed.get(id);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.forget(id, entry);
      return undefined;
    }
    this.keepRecent(id, entry);
    return entry.fingerprint.equals(request.fingerprint)
      ? { kind: 'completed', response: entry.response }
      : { kind: 'mismatch' };
  }

  /**
   * Marks `scope` as held by this instance until `heldUntil`; the returned handle moves that
   * later (a renewed lease) or ends it.
   */
  hold(scope: ScopedKey, fingerprint: Buffer, heldUntil: number): LocalHold {
    const id = scope.text;
    const entry: InFlight = { fingerprint, heldUntil };
    this.inFlight.set(id, entry);
    return {
      extend: (until) => void (entry.heldUntil = Math.max(entry.heldUntil, until)),
      end: () => {
        if (this.inFlight.get(id) === entry) this.inFlight.delete(id);
      },
    };
  }

  /** Remembers a completed outcome until `expiresAt`, and no longer than `maxAgeMs` from now. */
  remember(scope: ScopedKey, fingerprint: Buffer, response: StoredResponse, expiresAt: number): void {
    if (!this.limits) return;
    expiresAt = Math.min(expiresAt, performance.now() + this.limits.maxAgeMs);
    const id = scope.text;
    const bytes = response.body.length + response.headers.reduce((sum, [n, v]) => sum + n.length + v.length, 0) + 128;
    if (bytes > this.limits.maxBytes / 4) return;
    const previous = this.completed.get(id);
    if (previous) this.forget(id, previous);
    const kept = { ...response, body: ownCopy(response.body) };
    this.completed.set(id, {
      fingerprint: ownCopy(fingerprint),
      response: kept,
      expiresAt,
      bytes,
      written: ++this.writes,
    });
    this.bytes += bytes;
    for (const [oldest, entry] of this.completed) {
      if (this.completed.size <= this.limits.maxEntries && this.bytes <= this.limits.maxBytes) break;
      this.forget(oldest, entry);
    }
  }

  /** Drops what is remembered of `scope`'s outcome (the key was expired from outside). */
  evict(scope: ScopedKey): void {
    const entry = this.completed.get(scope.text);
    if (entry) this.forget(scope.text, entry);
  }

  /** Drops every remembered outcome (the database may have lost some: a failover). */
  forgetOutcomes(): void {
    this.completed.clear();
    this.bytes = 0;
  }

  /**
   * Moves a replayed outcome behind the newest (eviction takes the oldest first) once at least
   * half the cache's outcomes were written after it, not on every replay: a Map keeps a deleted
   * entry in its key's hash chain until it is rehashed, so a key moved on each of a retry storm's
   * replays makes every lookup of it walk one more deleted entry per replay before.
   */
  private keepRecent(id: string, entry: Completed): void {
    if (this.writes - entry.written < this.completed.size >> 1) return;
    this.completed.delete(id);
    this.completed.set(id, entry);
    entry.written = ++this.writes;
  }

  private forget(id: string, entry: Completed): void {
    this.completed.delete(id);
    this.bytes -= entry.bytes;
  }
}

/**
 * `buffer` in memory of its own. A small Buffer is usually a slice of Node's shared 8 KiB
 * allocation pool, and keeping the slice keeps the whole pool chunk: thousands of cached
 * outcomes would otherwise hold kilobytes each, unaccounted for in `maxBytes`.
 */
function ownCopy(buffer: Buffer): Buffer {
  if (buffer.byteLength === buffer.buffer.byteLength) return buffer;
  const copy = Buffer.allocUnsafeSlow(buffer.byteLength);
  buffer.copy(copy);
  return copy;
}
