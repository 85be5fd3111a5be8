import { scopeKey } from '../../src/key/scoped-key.js';

const scoped = ({ key, caller, endpoint }: { key: string; caller: string; endpoint: string }) =>
  scopeKey(key, caller, endpoint);

/**
 * Triples that a plain join of the three parts would confuse, whatever the separator and the
 * order of the parts (the scoping bug CONTRACT.md lists for other packages).
 */
const LOOKALIKES = [
  [
    { key: 'c', caller: 'ab', endpoint: 'POST /p' },
    { key: 'bc', caller: 'a', endpoint: 'POST /p' },
  ],
  [
    { key: 'b:k', caller: 'u:a', endpoint: 'POST /p' },
    { key: 'a:b:k', caller: 'u', endpoint: 'POST /p' },
  ],
  [
    { key: 'k', caller: 'u:POST /p', endpoint: 'POST /q' },
    { key: 'k', caller: 'u', endpoint: 'POST /p:POST /q' },
  ],
  [
    { key: 'k|u', caller: 'v', endpoint: 'POST /p' },
    { key: 'k', caller: 'u|v', endpoint: 'POST /p' },
  ],
  [
    { key: 'k', caller: 'u', endpoint: 'POST /p' },
    { key: 'k', caller: 'u', endpoint: 'POST /p ' },
  ],
  [
    { key: 'k","u', caller: '', endpoint: 'POST /p' },
    { key: 'k', caller: 'u","', endpoint: 'POST /p' },
  ],
];

describe('the key scope encoding', () => {
  it.each(LOOKALIKES.map((pair, index) => [index, ...pair]))(
    'pair %i: distinct texts and distinct lock ids',
    (_index, a, b) => {
      expect(scoped(a).text).not.toBe(scoped(b).text);
      expect(scoped(a).lockId).not.toBe(scoped(b).lockId);
    },
  );

  it('is stable: the same parts give the same text and lock id, a signed 64-bit decimal', () => {
    const scope = scopeKey('k', 'u', 'POST /p');
    const again = scopeKey('k', 'u', 'POST /p');
    expect(again.text).toBe(scope.text);
    expect(again.lockId).toBe(scope.lockId);
    const id = BigInt(scope.lockId);
    expect(id >= -(2n ** 63n) && id < 2n ** 63n).toBe(true);
  });

  it('names its row by the storage it was made for: as sent, or digested', () => {
    expect(scopeKey('k', 'u', 'POST /p').row).toEqual({ key: 'k', caller: 'u', endpoint: 'POST /p' });
    const digested = scopeKey('k', 'u', 'POST /p', 'digest');
    expect(digested.row).toEqual({
      key: `sha256:${digested.digest.toString('hex')}`,
      caller: '',
      endpoint: `sha256:${digested.endpointDigest.toString('hex')}`,
    });
    expect(digested.row).toBe(digested.row);
  });
});
