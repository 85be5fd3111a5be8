import { canonicalJson, fingerprintRequest } from '../../src/key/fingerprint.js';

const request = (body: unknown, query = '') => ({ body, query, headers: {} });

describe('fingerprintRequest', () => {
  it('does not change with the order of JSON object keys, at any depth', () => {
    const a = fingerprintRequest(request({ amount: 1, payer: { id: 'p', name: 'n' }, items: [{ a: 1, b: 2 }] }));
    const b = fingerprintRequest(request({ items: [{ b: 2, a: 1 }], payer: { name: 'n', id: 'p' }, amount: 1 }));
    expect(a.equals(b)).toBe(true);
    expect(canonicalJson({ b: 1, a: [{ d: 1, c: 2 }] })).toBe('{"a":[{"c":2,"d":1}],"b":1}');
  });

  it('changes with any value, with array order, and with the query string', () => {
    const base = fingerprintRequest(request({ amount: 1, items: [1, 2] }, 'a=1'));
    expect(base.equals(fingerprintRequest(request({ amount: 2, items: [1, 2] }, 'a=1')))).toBe(false);
    expect(base.equals(fingerprintRequest(request({ amount: 1, items: [2, 1] }, 'a=1')))).toBe(false);
    expect(base.equals(fingerprintRequest(request({ amount: 1, items: [1, 2] }, 'a=2')))).toBe(false);
    expect(base.equals(fingerprintRequest(request({ amount: '1', items: [1, 2] }, 'a=1')))).toBe(false);
  });

  it('ignores the order of query parameters', () => {
    expect(fingerprintRequest(request({}, 'a=1&b=2')).equals(fingerprintRequest(request({}, 'b=2&a=1')))).toBe(true);
  });

  it('can be narrowed to selected fields, or replaced by a function', () => {
    const narrowed = (body: unknown) => fingerprintRequest(request(body), ['amount', 'payer.id']);
    expect(narrowed({ amount: 1, payer: { id: 'p' }, note: 'x' }).equals(narrowed({ amount: 1, payer: { id: 'p' }, note: 'y' }))).toBe(true);
    expect(narrowed({ amount: 1, payer: { id: 'p' } }).equals(narrowed({ amount: 1, payer: { id: 'q' } }))).toBe(false);
    const byHeader = (tenant: string) => fingerprintRequest({ body: {}, query: '', headers: { 'x-tenant': tenant } }, (r) => r.headers['x-tenant']);
    expect(byHeader('a').equals(byHeader('a'))).toBe(true);
    expect(byHeader('a').equals(byHeader('b'))).toBe(false);
  });
});
