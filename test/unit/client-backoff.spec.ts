import { backoffDelayMs, retryAfterMs, uuidv7 } from '../../src/client/index.js';

describe('client backoff: exponential with full jitter', () => {
  it('draws uniformly below min(maxDelay, base × 2^(attempt-1))', () => {
    expect([1, 2, 3, 4, 5, 6].map((attempt) => backoffDelayMs(attempt, 100, 1_000, () => 0.999999))).toEqual([
      99, 199, 399, 799, 999, 999,
    ]);
    expect(backoffDelayMs(3, 100, 1_000, () => 0)).toBe(0);
    expect(backoffDelayMs(3, 100, 1_000, () => 0.5)).toBe(200);
  });
});

describe('client Retry-After', () => {
  it('reads delay-seconds and HTTP-dates, and nothing else', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs('2', now)).toBe(2_000);
    expect(retryAfterMs(' 0 ', now)).toBe(0);
    expect(retryAfterMs('Thu, 01 Jan 2026 00:00:03 GMT', now)).toBe(3_000);
    expect(retryAfterMs('Wed, 31 Dec 2025 23:59:00 GMT', now)).toBe(0);
    expect(retryAfterMs(null, now)).toBeUndefined();
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs('-1', now)).toBeUndefined();
  });
});

describe('client keys: UUID v7', () => {
  it('has version 7, the RFC 9562 variant, and the creation time in its first 48 bits', () => {
    const now = Date.parse('2026-11-30T12:00:00.123Z');
    const key = uuidv7(now);
    expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(parseInt(key.replace(/-/g, '').slice(0, 12), 16)).toBe(now);
  });

  it('is unique and sorts by creation time', () => {
    const keys = Array.from({ length: 1_000 }, (_, i) => uuidv7(1_700_000_000_000 + i));
    expect(new Set(keys).size).toBe(1_000);
    expect([...keys].sort()).toEqual(keys);
  });
});
