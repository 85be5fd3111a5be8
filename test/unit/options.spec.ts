import { resolveModuleOptions, resolveRouteOptions } from '../../src/options/settings.js';
import { resolveMessageOptions } from '../../src/messages/message-settings.js';

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
    expect(() => resolveModuleOptions({ renewLease: 'yes' as never })).toThrow(
      'option "renewLease" must be true or false, got yes',
    );
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
    expect(() => resolveRouteOptions(resolveModuleOptions({}), { ttl: '0s' })).toThrow(
      'option "ttl" must be longer than 0',
    );
  });
});

describe('duration bounds', () => {
  it('a positive duration under half a millisecond is 1 ms, not 0 (which would turn the sweeper off)', () => {
    expect(resolveModuleOptions({ sweepInterval: 0.3 }).sweepIntervalMs).toBe(1);
    expect(resolveModuleOptions({ sweepInterval: 0 }).sweepIntervalMs).toBe(0);
  });

  it('refuse a lease under 1 s, which would be renewed faster than a round trip and end under a running holder', () => {
    expect(() => resolveModuleOptions({ lease: '2ms' })).toThrow('option "lease" must be at least 1000 ms, got 2');
    expect(() => resolveRouteOptions(resolveModuleOptions({}), { mode: 'lease', lease: 999 })).toThrow(
      /option "lease" must be at least 1000 ms/,
    );
    expect(resolveModuleOptions({ lease: '1s' }).leaseMs).toBe(1000);
  });

  it('refuse what a timer or PostgreSQL could not hold, naming the option', () => {
    expect(() => resolveModuleOptions({ lease: '75d' })).toThrow(/option "lease" must be at most 6442450941 ms/);
    expect(() => resolveModuleOptions({ sweepInterval: '25d' })).toThrow(
      /option "sweepInterval" must be at most 2147483647 ms/,
    );
    expect(() => resolveModuleOptions({ ttl: Number.MAX_SAFE_INTEGER })).toThrow(/option "ttl" must be at most/);
    expect(resolveModuleOptions({ ttl: '3650d', lease: '74d', sweepInterval: '24d' })).toMatchObject({
      ttlMs: 315_360_000_000,
    });
  });
});

describe('partitionInterval (the partitioned key table)', () => {
  it('is a quarter of the ttl by default, at least one minute', () => {
    expect(resolveModuleOptions({}).partitionIntervalMs).toBe(6 * 3_600_000);
    expect(resolveModuleOptions({ ttl: '1h' }).partitionIntervalMs).toBe(900_000);
    expect(resolveModuleOptions({ ttl: '10s' }).partitionIntervalMs).toBe(60_000);
  });

  it('takes any duration from 1 s (partitions are named to the second)', () => {
    expect(resolveModuleOptions({ partitionInterval: '1s' }).partitionIntervalMs).toBe(1_000);
    expect(() => resolveModuleOptions({ partitionInterval: '500ms' })).toThrow(
      'option "partitionInterval" must be at least 1000 ms, got 500',
    );
  });
});

describe('options a typo would turn into another behaviour', () => {
  const module = resolveModuleOptions({});

  it('are refused when the app starts, naming the option', () => {
    expect(() => resolveModuleOptions({ anonymousCallers: 'deny' as never })).toThrow(
      `option "anonymousCallers" must be 'reject' or 'shared', got 'deny'`,
    );
    expect(() => resolveModuleOptions({ keyFormat: 'uuid' as never })).toThrow('option "keyFormat" must be');
    expect(() => resolveModuleOptions({ caller: 'user.id' as never })).toThrow('option "caller" must be a function');
    expect(() => resolveModuleOptions({ storeResponse: true as never })).toThrow(
      'option "storeResponse" must be a function',
    );
    expect(() => resolveModuleOptions({ replayHeaders: 'x-request-id' as never })).toThrow(
      'option "replayHeaders" must be a list of header names',
    );
    expect(() => resolveModuleOptions({ preparedStatements: 'false' as never })).toThrow(
      'option "preparedStatements" must be true or false',
    );
    expect(() => resolveRouteOptions(module, { fingerprint: 'amount' as never })).toThrow(
      'option "fingerprint" must be a list of body field paths',
    );
    expect(() => resolveRouteOptions(module, { fingerprint: ['amount', ''] })).toThrow('option "fingerprint"');
    expect(() => resolveRouteOptions(module, { mode: 'leased' as never })).toThrow(
      `option "mode" must be 'transactional' or 'lease', got 'leased'`,
    );
    expect(() => resolveRouteOptions(module, { required: 'false' as never })).toThrow(
      'option "required" must be true or false',
    );
    expect(() => resolveRouteOptions(module, { keyFormat: 'ulid' as never })).toThrow('option "keyFormat" must be');
  });

  it('accept every documented form', () => {
    expect(
      resolveModuleOptions({
        anonymousCallers: 'shared',
        keyFormat: /^[a-z]+$/,
        caller: () => 'a',
        replayHeaders: ['X-Request-Id'],
      }).anonymousCallers,
    ).toBe('shared');
    expect(
      resolveRouteOptions(module, {
        fingerprint: ['amount', 'payer.id'],
        keyFormat: 'printable-ascii',
        mode: 'lease',
        required: false,
      }).required,
    ).toBe(false);
    expect(
      resolveRouteOptions(module, { fingerprint: () => 1, keyFormat: (key) => key.length > 3 }).fingerprint,
    ).toEqual(expect.any(Function));
  });
});

describe('every entry merges its options over the defaults in one way', () => {
  const module = resolveModuleOptions({ ttl: '2h', lease: '20s' });

  it('an option given as undefined falls back to its default, on a route and on a message handler alike', () => {
    const route = resolveRouteOptions(module, { mode: undefined, ttl: undefined, lease: undefined });
    const message = resolveMessageOptions(
      module,
      { mode: undefined, ttl: undefined, lease: undefined, maxAttempts: undefined },
      'Consumer.pay',
    );
    for (const settings of [route, message]) {
      expect(settings).toMatchObject({ mode: 'transactional', ttlMs: 7_200_000, leaseMs: 20_000, renewLease: true });
    }
    expect(message.maxAttempts).toBe(5);
  });

  it('an invalid mode is refused on both, naming the handler', () => {
    expect(() => resolveRouteOptions(module, { mode: 'once' as never }, 'Payments.create')).toThrow(
      /@Idempotent\(\) on Payments\.create: option "mode"/,
    );
    expect(() => resolveMessageOptions(module, { mode: 'once' as never }, 'Consumer.pay')).toThrow(
      /@IdempotentMessage\(\) on Consumer\.pay: option "mode"/,
    );
  });
});

describe('the problemDocumentation option', () => {
  it('becomes the Link header of every problem; anything but an absolute http(s) URL is refused', () => {
    expect(
      resolveModuleOptions({ problemDocumentation: 'https://api.example.com/docs/errors#idempotency' }),
    ).toMatchObject({ problemLink: '<https://api.example.com/docs/errors#idempotency>; rel="describedby"' });
    expect(resolveModuleOptions({}).problemLink).toBeUndefined();
    for (const bad of ['/docs/errors', 'urn:x:y', 42 as never])
      expect(() => resolveModuleOptions({ problemDocumentation: bad })).toThrow(
        'option "problemDocumentation" must be an absolute http(s) URL',
      );
  });
});
