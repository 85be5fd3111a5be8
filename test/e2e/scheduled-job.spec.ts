import { sql } from '../support/database.js';
import { newCaller } from '../support/http.js';
import { type DemoProcess, startAppProcess, waitFor } from '../support/processes.js';

/** A cron of @nestjs/schedule in every instance, its slot's work run through IdempotencyService.run(). */
const SCHEDULED_APP = 'test/e2e/scheduled-job.app.mjs';

/** An instance's ticks so far. */
async function ticksOf(app: DemoProcess): Promise<Record<string, string[]>> {
  return (await fetch(`${app.url}/ticks`)).json() as Promise<Record<string, string[]>>;
}

/** The slots after `since` (s) that every instance ticked in. */
function sharedSlots(ticks: Array<Record<string, string[]>>, since: number): string[] {
  return Object.keys(ticks[0]).filter((slot) => Number(slot) > since && ticks.every((seen) => slot in seen));
}

/** An instance's ticks, complete: it stops ticking and lets the ticks in flight end first. */
async function finalTicksOf(app: DemoProcess): Promise<Record<string, string[]>> {
  return (await fetch(`${app.url}/ticks/final`)).json() as Promise<Record<string, string[]>>;
}

describe.each(['typeorm', 'drizzle'])('a scheduled job in three instances on the %s host, with processes', (host) => {
  const apps: DemoProcess[] = [];
  afterAll(async () => {
    await Promise.all(apps.splice(0).map((app) => app.kill().catch(() => undefined)));
  });

  it('every slot the three instances ticked in ran once: one payment per slot, one instance told "executed", the others "held" or "replayed"', async () => {
    const run = newCaller();
    apps.push(...(await Promise.all([1, 2, 3].map(() => startAppProcess(SCHEDULED_APP, { HOST: host, RUN: run })))));
    // Every instance has ticked in at least three slots since the last one started.
    const started = Date.now() / 1000;
    await waitFor(
      'three slots every instance ticked in',
      async () => sharedSlots(await Promise.all(apps.map(ticksOf)), started).length >= 3,
    );
    // Every payment written by then is told to its instance: none commits after the ticks are read.
    const ticks = await Promise.all(apps.map(finalTicksOf));
    await Promise.all(apps.splice(0).map((app) => app.kill()));
    const shared = sharedSlots(ticks, started);
    expect(shared.length).toBeGreaterThanOrEqual(3);
    for (const slot of shared) {
      const kinds = ticks.flatMap((seen) => seen[slot]);
      expect({ slot, executed: kinds.filter((kind) => kind === 'executed').length }).toEqual({ slot, executed: 1 });
      expect(kinds.every((kind) => ['executed', 'held', 'replayed'].includes(kind))).toBe(true);
    }
    const payments = await sql<{ amount: number; count: string }>(
      'SELECT amount, count(*) FROM payments WHERE caller = $1 GROUP BY amount ORDER BY amount',
      [run],
    );
    // No slot paid twice, and every slot any instance executed paid once.
    expect(payments.filter(({ count }) => count !== '1')).toEqual([]);
    const executed = new Set(
      ticks.flatMap((seen) => Object.keys(seen).filter((slot) => seen[slot].includes('executed'))),
    );
    expect(payments.map(({ amount }) => String(amount)).sort()).toEqual([...executed].sort());
  });
});
