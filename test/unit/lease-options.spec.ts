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
