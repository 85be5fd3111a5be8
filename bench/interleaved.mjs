// The interleaved A/B of two servers the A/B scripts share (sealed-ab.mjs, previous-ab.mjs): each
// round measures both, the first of the pair alternating from round to round, so that a position
// in the round favours neither, and each measurement follows a warm-up of its own server on the
// same path (not measured), so that neither starts its slot cold from idling through the other's.

/**
 * Round `round`'s ratio `measure(tried) / measure(reference)` (req/s; the reference goes first in
 * odd rounds), each measurement right after `warmUp(server)`, logged with the servers' `names` and
 * the path's `label`.
 */
export async function ratioOfRound({ round, reference, tried, names, measure, warmUp, label }) {
  const order = round % 2 ? [reference, tried] : [tried, reference];
  const rps = new Map();
  for (const server of order) {
    await warmUp(server, round);
    rps.set(server, await measure(server, round));
  }
  const ratio = rps.get(tried) / rps.get(reference);
  console.log(
    `round ${round}${label ? `, ${label}` : ''}: ${names[0]} ${rps.get(reference).toFixed(0)} req/s, ` +
      `${names[1]} ${rps.get(tried).toFixed(0)} req/s, ratio ${ratio.toFixed(3)}`,
  );
  return ratio;
}

/** `median 1.028 (0.840–1.198)`. */
export function medianAndRange(ratios) {
  const sorted = [...ratios].sort((a, b) => a - b);
  return `median ${sorted[Math.floor(sorted.length / 2)].toFixed(3)} (${sorted[0].toFixed(3)}–${sorted.at(-1).toFixed(3)})`;
}

/** The Node.js line the servers ran on. */
export const nodeLine = () => (process.env.BENCH_NODE ? `Node.js ${process.env.BENCH_NODE}` : process.version);
