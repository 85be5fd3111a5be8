import { type Partition, partitionName, planPartitions } from '../../src/operations/sweeper/partition-plan.js';

const H = 3_600_000;
const at = (hour: number): number => Date.UTC(2026, 11, 2) + hour * H;
const own = (fromHour: number, toHour: number): Partition => ({
  name: partitionName(at(fromHour)),
  fromMs: at(fromHour),
  toMs: at(toHour),
});
const ranges = (created: Partition[]): Array<[number, number]> =>
  created.map(({ fromMs, toMs }) => [(fromMs! - at(0)) / H, (toMs! - at(0)) / H]);

describe('partitionName', () => {
  it('names a partition by the UTC start of its range, to the second', () => {
    expect(partitionName(at(6))).toBe('idempotency_keys_p20261202t060000');
    expect(partitionName(at(6) + 61_000)).toBe('idempotency_keys_p20261202t060101');
  });
});

describe('planPartitions (now 10:30, hourly partitions, 3 h ahead)', () => {
  const now = at(10.5);
  const plan = (partitions: Partition[]) => planPartitions(partitions, now, H, 3 * H);

  it.each<[string, Partition[], Array<[number, number]>]>([
    [
      'no partition: from the start of the current hour to past now + 3 h',
      [],
      [
        [10, 11],
        [11, 12],
        [12, 13],
        [13, 14],
      ],
    ],
    ['every hour there: nothing', [own(10, 11), own(11, 12), own(12, 13), own(13, 14)], []],
    [
      'the missing hours only',
      [own(10, 11), own(12, 13)],
      [
        [11, 12],
        [13, 14],
      ],
    ],
    [
      "another partition's range inside an hour: the hour is cut around it",
      [own(10, 11), { name: 'made_by_hand', fromMs: at(11.25), toMs: at(11.75) }, own(12, 13), own(13, 14)],
      [
        [11, 11.25],
        [11.75, 12],
      ],
    ],
    [
      'a partition to MAXVALUE from 12:00: nothing after it',
      [own(10, 11), own(11, 12), { name: 'rest', fromMs: at(12), toMs: null }],
      [],
    ],
    [
      'a DEFAULT partition holds every row: nothing',
      [{ name: 'idempotency_keys_default', fromMs: null, toMs: null }],
      [],
    ],
    ['a longer partition covering several hours', [{ name: 'wide', fromMs: at(9), toMs: at(13) }], [[13, 14]]],
  ])('%s', (_case, partitions, created) => {
    expect(ranges(plan(partitions).create)).toEqual(created);
  });

  it('names each created partition by its start', () => {
    expect(plan([own(10, 11), own(11, 12), own(12, 13)]).create.map(({ name }) => name)).toEqual([
      'idempotency_keys_p20261202t130000',
    ]);
  });

  it.each<[string, Partition[], string[]]>([
    ['an own partition wholly past is dropped', [own(8, 9), own(9, 10)], [partitionName(at(8)), partitionName(at(9))]],
    [
      'one that ends exactly now is dropped (its rows expired before now)',
      [{ ...own(9, 10.5) }],
      [partitionName(at(9))],
    ],
    ['one that holds now is kept', [own(10, 11)], []],
    [
      'a past partition named by anyone else is kept',
      [{ name: 'idempotency_keys_2026', fromMs: at(0), toMs: at(1) }],
      [],
    ],
    ['MINVALUE to a past time, named by anyone else, is kept', [{ name: 'old', fromMs: null, toMs: at(1) }], []],
  ])('%s', (_case, partitions, dropped) => {
    expect(plan(partitions).drop).toEqual(dropped);
  });
});
