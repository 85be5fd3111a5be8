import { setTimeout as sleep } from 'node:timers/promises';
import type { Reservation } from './reservation.js';

/**
 * Wait mode: asks again (`reserve`), with a growing, jittered pause (50 ms to 500 ms) and no
 * connection held in between, until the key is no longer in progress or `waitMs` has passed.
 * Past the wait, the last answer stands, with its Retry-After (a lease's seconds left).
 */
export async function awaitTurn(
  reserve: () => Promise<Reservation>,
  waitMs: number,
  first: Reservation,
): Promise<Reservation> {
  const deadline = Date.now() + waitMs;
  let pause = 50;
  let last = first;
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) return last;
    await sleep(Math.min(left, pause / 2 + Math.random() * pause));
    pause = Math.min(pause * 2, 500);
    last = await reserve();
    if (last.kind !== 'in-progress') return last;
  }
}
