import { ReplayCache } from '../../src/core/reserve/replay-cache.js';
import { scopeKey } from '../../src/key/scoped-key.js';

const fingerprint = Buffer.from('fingerprint');
const limits = (maxEntries: number) => ({ maxEntries, maxBytes: 32 * 1024 * 1024, maxAgeMs: 60_000 });
const request = (key: string) => ({ scope: scopeKey(key, 'caller', 'POST /payments'), fingerprint });

/** Remembers `key`'s outcome (its body the key), for an hour. */
function remember(cache: ReplayCache, key: string): void {
  const response = { status: 201, headers: [], body: Buffer.from(key) };
  cache.remember(request(key).scope, fingerprint, response, performance.now() + 3_600_000);
}

/** The keys whose outcome the cache replays, of `keys`. */
function replayed(cache: ReplayCache, keys: string[]): string[] {
  return keys.filter((key) => cache.lookup(request(key), performance.now())?.kind === 'completed');
}

describe('ReplayCache eviction', () => {
  it('evicts the oldest outcome first when none was replayed', () => {
    const cache = new ReplayCache(limits(2));
    for (const key of ['a', 'b', 'c']) remember(cache, key);
    expect(replayed(cache, ['a', 'b', 'c'])).toEqual(['b', 'c']);
  });

  it('keeps a replayed outcome over one written after it and not replayed since', () => {
    const cache = new ReplayCache(limits(2));
    remember(cache, 'a');
    remember(cache, 'b');
    expect(replayed(cache, ['a'])).toEqual(['a']);
    remember(cache, 'c');
    expect(replayed(cache, ['a', 'b', 'c'])).toEqual(['a', 'c']);
  });

  it('keeps a key replayed many times through a cache full of others, and evicts the others in order', () => {
    const cache = new ReplayCache(limits(100));
    remember(cache, 'hot');
    for (let i = 0; i < 99; i++) remember(cache, `cold-${i}`);
    // The hot key is replayed between every write: 300 writes push every other outcome out.
    for (let i = 0; i < 300; i++) {
      expect(replayed(cache, ['hot'])).toEqual(['hot']);
      remember(cache, `new-${i}`);
    }
    const cold = Array.from({ length: 99 }, (_, i) => `cold-${i}`);
    const fresh = Array.from({ length: 300 }, (_, i) => `new-${i}`);
    expect(replayed(cache, ['hot'])).toEqual(['hot']);
    expect(replayed(cache, cold)).toEqual([]);
    expect(replayed(cache, fresh)).toEqual(fresh.slice(-99));
  });
});
