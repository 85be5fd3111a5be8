import { createHash } from 'node:crypto';
import { canonicalJson, fingerprintRequest, nestsDeeperThan } from '../../src/key/fingerprint.js';

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

  it('keeps a "__proto__" member as a member: it changes the fingerprint', () => {
    const plain = fingerprintRequest(request(JSON.parse('{"amount":1}')));
    const withProto = fingerprintRequest(request(JSON.parse('{"amount":1,"__proto__":{"x":1}}')));
    expect(withProto.equals(plain)).toBe(false);
    expect(canonicalJson(JSON.parse('{"b":1,"__proto__":{"x":1}}'))).toBe('{"__proto__":{"x":1},"b":1}');
  });

  it('tells a number JSON cannot hold (1e999) from null, from the other infinity and from every string', () => {
    const of = (text: string) => fingerprintRequest(request(JSON.parse(text)));
    const infinite = of('{"amount":1e999}');
    expect(infinite.equals(of('{"amount":1e999}'))).toBe(true);
    expect(infinite.equals(of('{"amount":2e999}'))).toBe(true);
    expect(infinite.equals(of('{"amount":null}'))).toBe(false);
    expect(infinite.equals(of('{"amount":-1e999}'))).toBe(false);
    expect(infinite.equals(of('{"amount":"Infinity"}'))).toBe(false);
    expect(infinite.equals(of('{"amount":"\\u0000nestjs-pg-idempotency:number:Infinity"}'))).toBe(false);
    expect(fingerprintRequest(request({ amount: Number.NaN })).equals(of('{"amount":null}'))).toBe(false);
    expect(fingerprintRequest(request({}), () => Infinity).equals(fingerprintRequest(request({}), () => null))).toBe(
      false,
    );
  });

  it('writes every JSON value as JSON.stringify does, so fingerprints recorded before stay valid', () => {
    const body = JSON.parse('{"b":[1,-0.5,1e21,2.5e-7,true,false,null,"x\\u0000y",{"d":"é"}],"a":"\\ud800"}');
    expect(canonicalJson(body)).toBe('{"a":"\\ud800","b":[1,-0.5,1e+21,2.5e-7,true,false,null,"x\\u0000y",{"d":"é"}]}');
    expect(fingerprintRequest(request({ amount: 1250, currency: 'EUR' })).toString('hex')).toBe(
      '7c0898e7de3a84d16306ea854659798810abeac23294baaee968b6e7d5421600',
    );
  });

  it('writes what JSON.stringify with the sorting replacer writes, for bodies and for any other value', () => {
    const NOT_FINITE = '\u0000nestjs-pg-idempotency:number:';
    // The definition the fingerprints recorded so far were computed with.
    const reference = (value: unknown): string =>
      JSON.stringify(value ?? null, (_key, item: unknown) => {
        if (typeof item === 'number') return Number.isFinite(item) ? item : `${NOT_FINITE}${item}`;
        if (typeof item === 'string') return item.startsWith(NOT_FINITE) ? `${NOT_FINITE}${item}` : item;
        if (item === null || typeof item !== 'object' || Array.isArray(item)) return item;
        const sorted: Record<string, unknown> = Object.create(null);
        for (const name of Object.keys(item).sort()) sorted[name] = (item as Record<string, unknown>)[name];
        return sorted;
      }) ?? 'null';
    class Money {
      constructor(readonly amount = 1) {}
    }
    const bare = Object.assign(Object.create(null), { z: 1, a: [2] });
    const values: unknown[] = [
      JSON.parse('{"b":1,"10":2,"9":3,"a":{"2":0,"1":1,"x":null},"4294967295":4,"4294967294":5,"01":6,"-1":7}'),
      JSON.parse('{"__proto__":{"x":[1,{"y":"\\ud800"}]},"é":"\\u2028","":0}'),
      { amount: 1e999, other: -Infinity, nan: Number.NaN, zero: -0, tiny: 5e-324, text: `${NOT_FINITE}1` },
      [undefined, null, 1, 'a', [[]], {}],
      { gone: undefined, kept: 1 },
      { when: new Date(0), money: new Money(), bare, list: [new Money()] },
      { toJSON: () => ({ replaced: true }) },
      { nested: { toJSON: () => 'string' } },
      { f: () => 1, s: Symbol('s'), kept: true },
      [() => 1, Symbol('s')],
      new Date(0),
      'text',
      NOT_FINITE,
      42,
      null,
      undefined,
      true,
      () => 1,
      Object.assign([1, 2], { extra: 3 }),
      JSON.parse('['.repeat(130) + '1' + ']'.repeat(130)),
      { getter: Object.defineProperty({}, 'lazy', { get: () => 'read', enumerable: true }) },
      Object.assign([1, 2], { toJSON: () => 'array' }),
      { hidden: Object.defineProperty({ a: 1 }, 'toJSON', { value: () => 'hidden', enumerable: false }) },
      new Proxy({ a: 1 }, { get: (target, name) => (name === 'toJSON' ? () => 'proxied' : Reflect.get(target, name)) }),
      new Proxy({ '10': 1, '9': 2, b: 3 } as object, { ownKeys: () => ['b', '10', '9'] }),
      Object.create({ toJSON: () => 'inherited' }, { a: { value: 1, enumerable: true } }),
    ];
    for (const value of values) expect(canonicalJson(value)).toBe(reference(value));
  });

  it('measures nesting depth without recursion', () => {
    const deep = JSON.parse('['.repeat(100_000) + ']'.repeat(100_000));
    expect(nestsDeeperThan(deep, 128)).toBe(true);
    expect(nestsDeeperThan({ a: { b: [1, { c: 2 }] } }, 128)).toBe(false);
    expect(nestsDeeperThan({ a: { b: [1, { c: 2 }] } }, 3)).toBe(true);
  });

  it("ignores the order of query parameters, but not the order of a repeated parameter's values (a list)", () => {
    expect(fingerprintRequest(request({}, 'a=1&b=2')).equals(fingerprintRequest(request({}, 'b=2&a=1')))).toBe(true);
    expect(
      fingerprintRequest(request({}, 'item=a&b=2&item=b')).equals(fingerprintRequest(request({}, 'b=2&item=a&item=b'))),
    ).toBe(true);
    expect(
      fingerprintRequest(request({}, 'item=a&item=b')).equals(fingerprintRequest(request({}, 'item=b&item=a'))),
    ).toBe(false);
  });

  it('can be narrowed to selected fields, or replaced by a function', () => {
    const narrowed = (body: unknown) => fingerprintRequest(request(body), ['amount', 'payer.id']);
    expect(
      narrowed({ amount: 1, payer: { id: 'p' }, note: 'x' }).equals(
        narrowed({ amount: 1, payer: { id: 'p' }, note: 'y' }),
      ),
    ).toBe(true);
    expect(narrowed({ amount: 1, payer: { id: 'p' } }).equals(narrowed({ amount: 1, payer: { id: 'q' } }))).toBe(false);
    const byHeader = (tenant: string) =>
      fingerprintRequest({ body: {}, query: '', headers: { 'x-tenant': tenant } }, (r) => r.headers['x-tenant']);
    expect(byHeader('a').equals(byHeader('a'))).toBe(true);
    expect(byHeader('a').equals(byHeader('b'))).toBe(false);
  });
});

describe('the query string in the fingerprint', () => {
  /** The fingerprint as earlier versions computed it: the query through URLSearchParams. */
  function fingerprintBefore(body: unknown, query: string): Buffer {
    const pairs = query === '' ? [] : [...new URLSearchParams(query)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return createHash('sha256')
      .update(canonicalJson({ body, query: pairs }))
      .digest();
  }
  const now = (body: unknown, query: string) => fingerprintRequest({ body, query, headers: {} });

  it.each([
    'to=bob&amount=10',
    '?to=bob&amount=10',
    'memo=50%+off%21&to=Ren%C3%A9',
    'to=Ren%C3%A9%zz',
    'a=1+2&b=%2B&c=%20&d=%',
    '=x&a==b&&c&;d=1',
    'k=%e2%82%ac&K=%E2%82%AC',
    'x=%EF%BB%BFbom',
    'name=Ren\u00e9&list=1&list=2',
    'a=%2',
  ])('a well-formed query fingerprints as before the upgrade: %s', (query) => {
    expect(now({ amount: 1 }, query).equals(fingerprintBefore({ amount: 1 }, query))).toBe(true);
  });

  it('values whose escapes are not UTF-8 stay apart, as the parsers that keep them as sent hand them over', () => {
    expect(now({}, 'payee=Ren%E9').equals(now({}, 'payee=Ren%EA'))).toBe(false);
    expect(now({}, 'payee=Ren%E9').equals(now({}, 'payee=Ren%FF'))).toBe(false);
  });
});
