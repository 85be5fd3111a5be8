import type { Recording } from '../../src/core/hold/carry-out.js';
import { type Answer, decide, type Decision, replacementAfter } from '../../src/http/run/outcome-decision.js';

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

describe('replacementAfter(): the problem sent once recording ended', () => {
  it.each<[Recording, ReturnType<typeof replacementAfter>]>([
    [{ kind: 'recorded' }, undefined],
    [{ kind: 'skipped' }, undefined],
    [{ kind: 'lost' }, 'lease-taken-over'],
    [{ kind: 'failed', refused: true }, 'outcome-refused'],
    [{ kind: 'failed', refused: false }, 'store-unavailable'],
  ])('%j → %j', (recording, expected) => {
    expect(replacementAfter(recording)).toBe(expected);
  });
});
