/** A partition of `idempotency_keys`: its name and the range of expiry times it holds (ms since 1970). */
export interface Partition {
  name: string;
  /** `null`: from MINVALUE (or a DEFAULT partition). */
  fromMs: number | null;
  /** `null`: to MAXVALUE (or a DEFAULT partition). */
  toMs: number | null;
}

/** What one maintenance run of the partitioned table does. */
export interface PartitionPlan {
  /** Ranges with no partition yet, each to be created, named by `partitionName`. */
  create: Partition[];
  /** Partitions the module named whose whole range is past. */
  drop: string[];
}

/** The names the module gives its partitions: the prefix, then the range's start in UTC to the second. */
export const OWN_NAME = /^idempotency_keys_p\d{8}t\d{6}$/;

/** The name of the partition that starts at `fromMs`: `idempotency_keys_p20261202t060000`. */
export function partitionName(fromMs: number): string {
  const iso = new Date(fromMs).toISOString();
  return `idempotency_keys_p${iso.slice(0, 10).replaceAll('-', '')}t${iso.slice(11, 19).replaceAll(':', '')}`;
}

/**
 * The partitions to create so that every expiry time from the start of the current interval to
 * `nowMs + aheadMs` has one (intervals start at whole multiples of `intervalMs` since 1970; a
 * range another partition covers in part is cut around it), and those of the module's own
 * partitions to drop: every one whose range ends at or before `nowMs`. Partitions named by
 * anyone else are never dropped.
 */
export function planPartitions(
  partitions: readonly Partition[],
  nowMs: number,
  intervalMs: number,
  aheadMs: number,
): PartitionPlan {
  const covered = partitions
    .map(({ fromMs, toMs }) => ({ from: fromMs ?? -Infinity, to: toMs ?? Infinity }))
    .filter(({ from, to }) => from < to)
    .sort((a, b) => a.from - b.from);
  const create: Partition[] = [];
  const end = nowMs + aheadMs;
  for (let start = Math.floor(nowMs / intervalMs) * intervalMs; start < end; start += intervalMs) {
    let from = start;
    const to = start + intervalMs;
    for (const range of covered) {
      if (range.to <= from || range.from >= to) continue;
      if (range.from > from) create.push({ name: partitionName(from), fromMs: from, toMs: range.from });
      from = Math.max(from, range.to);
      if (from >= to) break;
    }
    if (from < to) create.push({ name: partitionName(from), fromMs: from, toMs: to });
  }
  const drop = partitions
    .filter(({ name, toMs }) => OWN_NAME.test(name) && toMs !== null && toMs <= nowMs)
    .map(({ name }) => name);
  return { create, drop };
}
