import { resolveModuleOptions, resolveRouteOptions } from '../../src/idempotency.options.js';

describe('the renewLease option', () => {
  it('is on by default; a module or a route can turn it off', () => {
    const module = resolveModuleOptions({});
    expect(resolveRouteOptions(module, { mode: 'lease' }).renewLease).toBe(true);
    expect(resolveRouteOptions(module, { mode: 'lease', renewLease: false }).renewLease).toBe(false);
    const fixed = resolveModuleOptions({ renewLease: false });
    expect(resolveRouteOptions(fixed, { mode: 'lease' }).renewLease).toBe(false);
    expect(resolveRouteOptions(fixed, { mode: 'lease', renewLease: true }).renewLease).toBe(true);
  });

  it('refuses anything but true or false, naming the option', () => {
    expect(() => resolveModuleOptions({ renewLease: 'yes' as never })).toThrow('option "renewLease" must be true or false, got yes');
    expect(() => resolveRouteOptions(resolveModuleOptions({}), { renewLease: 1 as never })).toThrow(
      'option "renewLease" must be true or false, got 1',
    );
  });
});

describe('durations', () => {
  it('are whole milliseconds: a fractional number is rounded, as a fractional string is', () => {
    const module = resolveModuleOptions({ ttl: 1500.4, lease: 1500.5 });
    expect(module.ttlMs).toBe(1500);
    expect(module.leaseMs).toBe(1501);
    expect(resolveModuleOptions({ ttl: '1.5s' }).ttlMs).toBe(1500);
    expect(resolveRouteOptions(module, { ttl: 2.6, wait: 10.2 })).toMatchObject({ ttlMs: 3, waitMs: 10 });
  });

  it('refuse a ttl of 0, which would expire every key as it is recorded', () => {
    expect(() => resolveModuleOptions({ ttl: 0 })).toThrow('option "ttl" must be longer than 0');
    expect(() => resolveRouteOptions(resolveModuleOptions({}), { ttl: '0s' })).toThrow('option "ttl" must be longer than 0');
  });
});

describe('duration bounds', () => {
  it('a positive duration under half a millisecond is 1 ms, not 0 (which would turn the sweeper off)', () => {
    expect(resolveModuleOptions({ sweepInterval: 0.3 }).sweepIntervalMs).toBe(1);
    expect(resolveModuleOptions({ sweepInterval: 0 }).sweepIntervalMs).toBe(0);
  });

  it('refuse a lease under 1 s, which would be renewed faster than a round trip and end under a running holder', () => {
    expect(() => resolveModuleOptions({ lease: '2ms' })).toThrow('option "lease" must be at least 1000 ms, got 2');
    expect(() => resolveRouteOptions(resolveModuleOptions({}), { mode: 'lease', lease: 999 })).toThrow(/option "lease" must be at least 1000 ms/);
    expect(resolveModuleOptions({ lease: '1s' }).leaseMs).toBe(1000);
  });

  it('refuse what a timer or PostgreSQL could not hold, naming the option', () => {
    expect(() => resolveModuleOptions({ lease: '75d' })).toThrow(/option "lease" must be at most 6442450941 ms/);
    expect(() => resolveModuleOptions({ sweepInterval: '25d' })).toThrow(/option "sweepInterval" must be at most 2147483647 ms/);
    expect(() => resolveModuleOptions({ ttl: Number.MAX_SAFE_INTEGER })).toThrow(/option "ttl" must be at most/);
    expect(resolveModuleOptions({ ttl: '3650d', lease: '74d', sweepInterval: '24d' })).toMatchObject({ ttlMs: 315_360_000_000 });
  });
});
