import type { MessageSettings } from '../../src/messages/message-settings.js';
import { type MessageOutcome, settlementOf } from '../../src/messages/message/message-outcome.js';
import { isMalformed, readMessage } from '../../src/messages/read-message.js';
import type { ReceivedMessage } from '../../src/messages/message/received-message.js';

/** What the consumer does with a message, for every outcome of its delivery. */
describe('settlementOf', () => {
  const table: Array<[MessageOutcome, string]> = [
    [{ kind: 'executed', reply: 1 }, 'ack'],
    [{ kind: 'duplicate', reply: 1 }, 'ack'],
    [{ kind: 'failed-before', error: 'x' }, 'ack'],
    [{ kind: 'tombstone', completedAt: new Date(0) }, 'ack'],
    [{ kind: 'held' }, 'requeue'],
    [{ kind: 'retry', error: new Error('x') }, 'requeue'],
    [{ kind: 'unavailable', error: new Error('x') }, 'requeue'],
    [{ kind: 'dead', error: new Error('x') }, 'dead-letter'],
    [{ kind: 'mismatch' }, 'dead-letter'],
    [{ kind: 'malformed', why: 'x' }, 'dead-letter'],
  ];

  it.each(table)('%o: %s', (outcome, settlement) => expect(settlementOf(outcome)).toBe(settlement));

  it('lists every outcome', () => {
    const kinds: Record<MessageOutcome['kind'], true> = {
      executed: true,
      duplicate: true,
      'failed-before': true,
      tombstone: true,
      held: true,
      retry: true,
      unavailable: true,
      dead: true,
      mismatch: true,
      malformed: true,
    };
    expect(new Set(table.map(([outcome]) => outcome.kind))).toEqual(new Set(Object.keys(kinds)));
  });
});

describe('readMessage', () => {
  const settings = {
    keyOf: (m: ReceivedMessage) => m.id,
    tenantOf: () => undefined,
    ttlMs: 60_000,
  } as unknown as MessageSettings;
  const message = (over: Partial<ReceivedMessage>): ReceivedMessage => ({
    transport: 'rmq',
    pattern: 'payment.created',
    headers: {},
    data: { a: 1, b: 2 },
    attempt: 1,
    id: 'k-1',
    ...over,
  });

  it('scopes the key by pattern and tenant, and fingerprints the payload whatever its key order', () => {
    const read = readMessage(message({}), settings);
    const reordered = readMessage(message({ data: { b: 2, a: 1 } }), settings);
    if (isMalformed(read) || isMalformed(reordered)) throw new Error('read as malformed');
    expect(read.scope).toMatchObject({ key: 'k-1', caller: '', endpoint: 'MESSAGE payment.created' });
    expect(read.fingerprint.equals(reordered.fingerprint)).toBe(true);
    const other = readMessage(message({ data: { a: 1, b: 3 } }), settings);
    expect(!isMalformed(other) && other.fingerprint.equals(read.fingerprint)).toBe(false);
  });

  it.each([
    [{ id: undefined }, /has no key/],
    [{ id: '' }, /has no key/],
    [{ id: 'k'.repeat(256) }, /longer than 255 characters/],
    [{ id: 'ké' }, /not printable ASCII/],
    [{ malformed: 'the message body is not JSON' }, /not JSON/],
  ] as Array<[Partial<ReceivedMessage>, RegExp]>)('%o is malformed', (over, why) => {
    const read = readMessage(message(over), settings);
    expect(isMalformed(read) && read.malformed).toMatch(why);
  });
});
