import { randomBytes } from 'node:crypto';
import { resolveModuleOptions, resolveRouteOptions } from '../../src/options/settings.js';
import { scopeKey } from '../../src/key/scoped-key.js';
import { SealedOutcomes } from '../../src/store/protect/sealed-outcomes.js';
import { UnreadableOutcomeError } from '../../src/store/protect/unreadable-outcome.error.js';
import { redact } from '../../src/store/redaction.js';

const aesKey = () => randomBytes(32);

describe('the storage option', () => {
  it('keeps keys and outcomes in clear by default', () => {
    const settings = resolveModuleOptions({});
    expect(settings.keyStorage).toBe('clear');
    expect(settings.outcomes).not.toBeInstanceOf(SealedOutcomes);
  });

  it('refuses a key that is not 32 bytes, a repeated id, an empty list and an unknown key storage, naming the option', () => {
    expect(() =>
      resolveModuleOptions({ storage: { encryption: { keys: [{ id: 'k1', key: randomBytes(16) }] } } }),
    ).toThrow(
      'option "storage.encryption.keys[0].key" must be 32 bytes (a Buffer, or their base64 text: openssl rand -base64 32), got 16 bytes',
    );
    expect(() => resolveModuleOptions({ storage: { encryption: { keys: [{ id: 'k1', key: 'c2hvcnQ=' }] } } })).toThrow(
      'got 5 bytes',
    );
    expect(() =>
      resolveModuleOptions({
        storage: {
          encryption: {
            keys: [
              { id: 'k1', key: aesKey() },
              { id: 'k1', key: aesKey() },
            ],
          },
        },
      }),
    ).toThrow('option "storage.encryption.keys[1].id" repeats the id \'k1\'');
    expect(() => resolveModuleOptions({ storage: { encryption: { keys: [{ id: '', key: aesKey() }] } } })).toThrow(
      'must be 1 to 64 printable ASCII',
    );
    expect(() => resolveModuleOptions({ storage: { encryption: { keys: [] } } })).toThrow('must list at least one key');
    expect(() => resolveModuleOptions({ storage: { keys: 'hashed' as never } })).toThrow(
      `option "storage.keys" must be 'clear' or 'digest'`,
    );
  });

  it('takes a key as base64 text', () => {
    const key = aesKey();
    const settings = resolveModuleOptions({
      storage: { encryption: { keys: [{ id: 'k1', key: key.toString('base64') }] } },
    });
    expect((settings.outcomes as SealedOutcomes).currentKeyId).toBe('k1');
  });
});

describe('sealed outcomes', () => {
  const owner = scopeKey('key', 'alice', 'POST /payments');
  const fingerprint = randomBytes(32);
  const response = {
    status: 201,
    headers: [['content-type', 'application/json']] as [string, string][],
    body: Buffer.from('{"id":1}'),
  };

  it('open with any listed key; seal with the first', () => {
    const old = { id: 'old', key: aesKey() };
    const sealedBefore = new SealedOutcomes([old]).columns(response, owner, fingerprint);
    const rotated = new SealedOutcomes([{ id: 'new', key: aesKey() }, old]);
    const row = {
      status: 201,
      response_headers: JSON.parse(sealedBefore[0]),
      response_body: sealedBefore[1],
      fingerprint,
    };
    expect(rotated.read(row, owner)).toEqual(response);
    expect(JSON.parse(rotated.columns(response, owner, fingerprint)[0])).toEqual({ sealedWith: 'new' });
  });

  it('seal each outcome under an IV of its own, and open it to the same bytes (headers in any script, any body)', () => {
    const outcomes = new SealedOutcomes([{ id: 'k1', key: aesKey() }]);
    const ivs = new Set<string>();
    // More seals than one block of IVs holds, twice over: no IV comes round again across blocks.
    for (let i = 0; i < 600; i++) {
      const sent = {
        status: 201,
        headers: [['x-note', `zahlung-${i}-über-€`]] as [string, string][],
        body: i % 3 ? randomBytes(i) : Buffer.alloc(0),
      };
      const [headers, body] = outcomes.columns(sent, owner, fingerprint);
      ivs.add(body.subarray(1, 13).toString('hex'));
      const row = { status: 201, response_headers: JSON.parse(headers), response_body: body, fingerprint };
      expect(outcomes.read(row, owner)).toEqual(sent);
    }
    expect(ivs.size).toBe(600);
  });

  it('refuse an outcome moved to another row, or given another status', () => {
    const outcomes = new SealedOutcomes([{ id: 'k1', key: aesKey() }]);
    const [headers, body] = outcomes.columns(response, owner, fingerprint);
    const row = { status: 201, response_headers: JSON.parse(headers), response_body: body, fingerprint };
    expect(() => outcomes.read(row, scopeKey('key', 'mallory', 'POST /payments'))).toThrow(UnreadableOutcomeError);
    expect(() => outcomes.read(row, scopeKey('key', 'alice', 'POST /refunds'))).toThrow(UnreadableOutcomeError);
    expect(() => outcomes.read({ ...row, status: 200 }, owner)).toThrow('authentication tag does not match');
    expect(() => outcomes.read({ ...row, fingerprint: randomBytes(32) }, owner)).toThrow(UnreadableOutcomeError);
  });
});

describe('redaction', () => {
  const redaction = resolveRouteOptions(resolveModuleOptions({}), {
    redact: { headers: ['X-Token'], body: ['card.number', 'items.secret'] },
  }).redaction;

  it('drops the named headers, and the named fields of a JSON body (in every element of an array)', () => {
    const stored = redact(
      {
        status: 201,
        headers: [
          ['content-type', 'application/vnd.api+json; charset=utf-8'],
          ['x-token', 't'],
        ],
        body: Buffer.from(
          JSON.stringify({ card: { number: '4242', last4: '4242' }, items: [{ secret: 1, n: 1 }, { n: 2 }] }),
        ),
      },
      redaction,
    );
    expect(stored.headers).toEqual([['content-type', 'application/vnd.api+json; charset=utf-8']]);
    expect(JSON.parse(stored.body.toString())).toEqual({ card: { last4: '4242' }, items: [{ n: 1 }, { n: 2 }] });
  });

  it('keeps a body that is not JSON, or has none of the fields, byte for byte', () => {
    const text = {
      status: 200,
      headers: [['content-type', 'text/plain']] as [string, string][],
      body: Buffer.from('card.number'),
    };
    expect(redact(text, redaction).body).toBe(text.body);
    const untouched = {
      status: 200,
      headers: [['content-type', 'application/json']] as [string, string][],
      body: Buffer.from('{ "a" : 1 }'),
    };
    expect(redact(untouched, redaction).body).toBe(untouched.body);
  });

  it('refuses a field path with an empty part', () => {
    expect(() => resolveRouteOptions(resolveModuleOptions({}), { redact: { body: ['card.'] } })).toThrow(
      'option "redact.body" must be a list of body field paths',
    );
  });
});
