import { idempotentRequest } from '../../src/key/idempotent-request.js';
import { scopeKey } from '../../src/key/scoped-key.js';

describe('an idempotent request', () => {
  it('computes its fingerprint once, and only when it is first read', () => {
    let computed = 0;
    const request = idempotentRequest(scopeKey('k', 'u', 'POST /p'), 1_000, () => {
      computed += 1;
      return Buffer.from('fingerprint');
    });
    expect(computed).toBe(0);
    expect(request.fingerprint.toString()).toBe('fingerprint');
    expect(request.fingerprint).toBe(request.fingerprint);
    expect(computed).toBe(1);
    expect(request.ttlMs).toBe(1_000);
    expect(request.scope.text).toBe(JSON.stringify(['k', 'u', 'POST /p']));
  });
});
