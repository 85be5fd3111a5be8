import {
  afterRecording,
  type Answer,
  type Decision,
  decide,
  decideWork,
  type Recording,
  type WorkDecision,
} from '../../src/core/outcome-decision.js';

const record = (rollbackWrites: boolean): Decision => ({ action: 'record', rollbackWrites });
const release = (
  keepWrites: boolean,
  reason: 'not-stored' | 'failed',
  status: number,
  replaceWith?: 'failed-after-answer' | 'too-large',
): Decision =>
  replaceWith
    ? { action: 'release', keepWrites, reason, status, replaceWith }
    : { action: 'release', keepWrites, reason, status };

/**
 * Every case of an outcome: how the answer came (after the handler, sent by the handler itself
 * before it settled, or early by someone else), whether the handler failed, whether the policy
 * stores the status, whether the body fits. Statuses: 201 (a success), 422 (a thrown
 * deterministic 4xx), 503 (not stored by the default policy) and 204 (a success the route's
 * policy declines).
 */
const CASES: Array<
  [answer: Answer, failed: boolean, status: number, storable: boolean, fits: boolean, expected: Decision]
> = [
  // after the handler: the usual path
  ['after-handler', false, 201, true, true, record(false)],
  ['after-handler', false, 201, true, false, release(false, 'failed', 201, 'too-large')],
  ['after-handler', false, 204, false, true, release(true, 'not-stored', 204)],
  ['after-handler', false, 204, false, false, release(true, 'not-stored', 204)],
  ['after-handler', true, 422, true, true, record(true)],
  ['after-handler', true, 422, true, false, release(false, 'failed', 422, 'too-large')],
  ['after-handler', true, 503, false, true, release(false, 'not-stored', 503)],
  ['after-handler', true, 503, false, false, release(false, 'not-stored', 503)],
  // the handler's own answer, before it settled
  ['self-sent', false, 201, true, true, record(false)],
  ['self-sent', false, 201, true, false, release(false, 'failed', 201, 'too-large')],
  ['self-sent', false, 204, false, true, release(true, 'not-stored', 204)],
  ['self-sent', false, 204, false, false, release(true, 'not-stored', 204)],
  ['self-sent', true, 201, true, true, release(false, 'not-stored', 500, 'failed-after-answer')],
  ['self-sent', true, 201, true, false, release(false, 'not-stored', 500, 'failed-after-answer')],
  ['self-sent', true, 204, false, true, release(false, 'not-stored', 500, 'failed-after-answer')],
  ['self-sent', true, 204, false, false, release(false, 'not-stored', 500, 'failed-after-answer')],
  // someone else's answer, before the handler settled (gone already)
  ['early', false, 201, true, true, record(false)],
  ['early', false, 201, true, false, release(false, 'failed', 201, 'too-large')],
  ['early', false, 408, false, true, release(false, 'not-stored', 408)],
  ['early', false, 204, false, false, release(true, 'not-stored', 204)],
  ['early', true, 201, true, true, release(false, 'failed', 201)],
  ['early', true, 201, true, false, release(false, 'failed', 201)],
  ['early', true, 408, false, true, release(false, 'failed', 408)],
  ['early', true, 408, false, false, release(false, 'failed', 408)],
];

describe('decide(): what to do with an outcome', () => {
  it('the table lists every combination of answer, handler, policy and size once', () => {
    const seen = new Set(CASES.map(([answer, failed, , storable, fits]) => `${answer}/${failed}/${storable}/${fits}`));
    expect(seen.size).toBe(3 * 2 * 2 * 2);
    expect(CASES).toHaveLength(seen.size);
  });

  it.each(CASES)(
    '%s, handler failed %s, status %i, storable %s, fits %s',
    (answer, handlerFailed, status, storable, fits, expected) => {
      expect(decide({ answer, handlerFailed, status, storable, fits })).toEqual(expected);
    },
  );

  it('a success the policy does not store keeps its writes; a failure that is not stored rolls them back, whatever its status', () => {
    for (const status of [200, 204, 302, 399]) {
      expect(
        decide({ answer: 'after-handler', handlerFailed: false, status, storable: false, fits: true }),
      ).toMatchObject({ keepWrites: true });
    }
    for (const status of [400, 408, 429, 500, 503]) {
      expect(
        decide({ answer: 'after-handler', handlerFailed: false, status, storable: false, fits: true }),
      ).toMatchObject({ keepWrites: false });
    }
    expect(
      decide({ answer: 'after-handler', handlerFailed: true, status: 201, storable: false, fits: true }),
    ).toMatchObject({ keepWrites: false });
  });
});

describe('afterRecording(): what recording came to', () => {
  it.each<[Recording, ReturnType<typeof afterRecording>]>([
    [{ kind: 'recorded' }, { event: 'executed' }],
    [{ kind: 'skipped' }, { event: 'executed' }],
    [{ kind: 'lost' }, { event: 'released', reason: 'lease-lost', replaceWith: 'lease-taken-over' }],
    [
      { kind: 'failed', refused: true },
      { event: 'released', reason: 'failed', replaceWith: 'outcome-refused' },
    ],
    [
      { kind: 'failed', refused: false },
      { event: 'released', reason: 'failed', replaceWith: 'store-unavailable' },
    ],
  ])('%j → %j', (recording, expected) => {
    expect(afterRecording(recording)).toEqual(expected);
  });
});

describe('decideWork(): what to do when work run through the core (a message, a call) ended', () => {
  const CASES_OF_WORK: Array<[failed: boolean, transient: boolean, recordFailure: boolean, expected: WorkDecision]> = [
    [false, false, false, { action: 'record', rollbackWrites: false }],
    [false, false, true, { action: 'record', rollbackWrites: false }],
    [false, true, false, { action: 'record', rollbackWrites: false }],
    [false, true, true, { action: 'record', rollbackWrites: false }],
    [true, false, false, { action: 'release', keepWrites: false }],
    [true, false, true, { action: 'record', rollbackWrites: true }],
    [true, true, false, { action: 'release', keepWrites: false }],
    [true, true, true, { action: 'release', keepWrites: false }],
  ];

  it('the table lists every combination once', () => {
    expect(
      new Set(CASES_OF_WORK.map(([failed, transient, recordFailure]) => `${failed}/${transient}/${recordFailure}`))
        .size,
    ).toBe(8);
    expect(CASES_OF_WORK).toHaveLength(8);
  });

  it.each(CASES_OF_WORK)(
    "failed %s, the store's failure %s, recordFailure asked %s",
    (failed, transient, recordFailure, expected) => {
      expect(decideWork({ failed, transient, recordFailure })).toEqual(expected);
    },
  );
});
