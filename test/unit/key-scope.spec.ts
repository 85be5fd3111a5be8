import { scopeLockId, scopeText } from '../../src/store/key-scope.js';

/**
 * Triples that a plain join of the three parts would confuse, whatever the separator and the
 * order of the parts (the scoping bug CONTRACT.md lists for other packages).
 */
const LOOKALIKES = [
  [{ key: 'c', caller: 'ab', endpoint: 'POST /p' }, { key: 'bc', caller: 'a', endpoint: 'POST /p' }],
  [{ key: 'b:k', caller: 'u:a', endpoint: 'POST /p' }, { key: 'a:b:k', caller: 'u', endpoint: 'POST /p' }],
  [{ key: 'k', caller: 'u:POST /p', endpoint: 'POST /q' }, { key: 'k', caller: 'u', endpoint: 'POST /p:POST /q' }],
  [{ key: 'k|u', caller: 'v', endpoint: 'POST /p' }, { key: 'k', caller: 'u|v', endpoint: 'POST /p' }],
  [{ key: 'k', caller: 'u', endpoint: 'POST /p' }, { key: 'k', caller: 'u', endpoint: 'POST /p ' }],
  [{ key: 'k","u', caller: '', endpoint: 'POST /p' }, { key: 'k', caller: 'u","', endpoint: 'POST /p' }],
];

describe('the key scope encoding', () => {
  it.each(LOOKALIKES.map((pair, index) => [index, ...pair]))('pair %i: distinct texts and distinct lock ids', (_index, a, b) => {
    expect(scopeText(a)).not.toBe(scopeText(b));
    expect(scopeLockId(a)).not.toBe(scopeLockId(b));
  });

  it('is stable: the same parts give the same text and lock id, a signed 64-bit decimal', () => {
    const scope = { key: 'k', caller: 'u', endpoint: 'POST /p' };
    const again = { ...scope };
    expect(scopeText(again)).toBe(scopeText(scope));
    expect(scopeLockId(again)).toBe(scopeLockId(scope));
    const id = BigInt(scopeLockId(scope));
    expect(id >= -(2n ** 63n) && id < 2n ** 63n).toBe(true);
  });
});
