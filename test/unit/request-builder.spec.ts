import { MAX_CALLER_BYTES, MAX_ENDPOINT_LENGTH } from '../../src/key/key-limits.js';
import { buildRequest, ENDPOINT_PREFIXES, isRefusal, type RequestInput } from '../../src/key/request-builder.js';
import { scopeKey } from '../../src/key/scoped-key.js';

const input = (overrides: Partial<RequestInput> = {}): RequestInput => ({
  key: 'key-1',
  caller: 'tenant-a',
  anonymous: 'reject',
  endpoint: { prefix: ENDPOINT_PREFIXES.message, name: 'payments.create' },
  ttlMs: 60_000,
  keyStorage: 'clear',
  fingerprint: () => Buffer.from('f'),
  ...overrides,
});

describe('buildRequest(): the one request every entry builds', () => {
  it('scopes the key by caller and endpoint (prefix and name), in the key storage asked, with the ttl', () => {
    const built = buildRequest(input({ keyStorage: 'digest' }));
    expect(isRefusal(built)).toBe(false);
    if (isRefusal(built)) return;
    expect(built.scope).toEqual(scopeKey('key-1', 'tenant-a', 'MESSAGE payments.create', 'digest'));
    expect(built.ttlMs).toBe(60_000);
  });

  it('computes the fingerprint once, when first read, never before', () => {
    let computed = 0;
    const built = buildRequest(input({ fingerprint: () => Buffer.from(String(++computed)) }));
    expect(computed).toBe(0);
    if (isRefusal(built)) throw new Error('refused');
    expect(built.fingerprint.toString()).toBe('1');
    expect(built.fingerprint.toString()).toBe('1');
    expect(computed).toBe(1);
  });

  it.each<[string, Partial<RequestInput>, unknown]>([
    ['no key', { key: undefined }, { refused: 'key', problem: 'missing' }],
    ['an empty key', { key: '' }, { refused: 'key', problem: 'missing' }],
    ['a key of 256 characters', { key: 'k'.repeat(256) }, { refused: 'key', problem: 'is longer than 255 characters' }],
    ['a key with a space', { key: 'a b' }, { refused: 'key', problem: 'is not printable ASCII' }],
    [
      'an endpoint over the limit in UTF-8 bytes',
      { endpoint: { prefix: 'CALL ', name: 'é'.repeat(MAX_ENDPOINT_LENGTH / 2) } },
      { refused: 'endpoint', maxNameBytes: MAX_ENDPOINT_LENGTH - 5 },
    ],
    ['no caller, anonymous callers refused', { caller: '' }, { refused: 'anonymous' }],
    ['a caller that is no string', { caller: 42 }, { refused: 'caller', maxBytes: MAX_CALLER_BYTES }],
    ['a caller with a NUL', { caller: 'a\0b' }, { refused: 'caller', maxBytes: MAX_CALLER_BYTES }],
    [
      'a caller over the limit',
      { caller: 'c'.repeat(MAX_CALLER_BYTES + 1) },
      { refused: 'caller', maxBytes: MAX_CALLER_BYTES },
    ],
  ])('refuses %s', (_case, overrides, refusal) => {
    expect(buildRequest(input(overrides))).toEqual(refusal);
  });

  it('checks the key, then the endpoint, then the caller: the first wrong one is told', () => {
    const long = { prefix: 'POST ', name: `/${'p'.repeat(MAX_ENDPOINT_LENGTH)}` };
    expect(buildRequest(input({ key: '', endpoint: long, caller: '' }))).toMatchObject({ refused: 'key' });
    expect(buildRequest(input({ endpoint: long, caller: '' }))).toMatchObject({ refused: 'endpoint' });
    expect(buildRequest(input({ caller: '' }))).toMatchObject({ refused: 'anonymous' });
  });

  it("leaves a key its entry's own format checked as it is (a quoted HTTP key may hold a space), and lets an anonymous caller share", () => {
    const built = buildRequest(input({ key: 'a b', keyChecked: true, caller: '', anonymous: 'shared' }));
    expect(isRefusal(built)).toBe(false);
  });

  it('names each entry kind once: messages, mutations and calls', () => {
    expect(ENDPOINT_PREFIXES).toEqual({ message: 'MESSAGE ', mutation: 'GRAPHQL ', call: 'CALL ' });
  });
});
