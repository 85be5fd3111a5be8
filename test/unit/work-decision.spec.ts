import { decideWork, type WorkDecision } from '../../src/core/work-decision.js';

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
