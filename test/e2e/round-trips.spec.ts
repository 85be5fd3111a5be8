import pg from 'pg';
import { paymentCount } from '../support/database.js';
import { type RunningApp, startLab } from '../support/apps.js';
import { CommitCounter } from '../support/commit-counter.subscriber.js';
import { newCaller, newKey, send } from '../support/http.js';

/** Counts the queries (round trips) the app's pg clients send while `run` runs. */
async function countRoundTrips(run: () => Promise<unknown>): Promise<number> {
  const original = pg.Client.prototype.query;
  let count = 0;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    count++;
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    await run();
  } finally {
    pg.Client.prototype.query = original;
  }
  return count;
}

describe('round trips and the key transaction', () => {
  let lab: RunningApp;
  beforeAll(async () => (lab = await startLab()));
  afterAll(() => lab.close());

  it('an executed request costs no more round trips than the same handler in a plain transaction', async () => {
    const caller = newCaller();
    // Warm both routes up (connections, metadata).
    await send(`${lab.url}/lab/plain`, { caller, body: {} });
    await send(`${lab.url}/lab/twin`, { key: newKey(), caller, body: {} });
    const baseline = await countRoundTrips(() => send(`${lab.url}/lab/plain`, { caller, body: {} }));
    const key = newKey();
    const executed = await countRoundTrips(() => send(`${lab.url}/lab/twin`, { key, caller, body: {} }));
    const replayed = await countRoundTrips(() => send(`${lab.url}/lab/twin`, { key, caller, body: {} }));
    expect(baseline).toBe(4); // START TRANSACTION, INSERT, SELECT, COMMIT
    expect(executed).toBe(baseline);
    expect(replayed).toBe(0);
    expect(await paymentCount(caller)).toBe(4);
  });

  it('nested manager.transaction() inside a handler uses a savepoint within the key transaction', async () => {
    const caller = newCaller();
    const key = newKey();
    const answer = await send(`${lab.url}/lab/nested`, { key, caller, body: {} });
    expect(answer.status).toBe(201);
    expect(answer.json).toEqual({ failed: 'inner failure' });
    expect(await paymentCount(caller)).toBe(1);
  });

  it('TypeORM subscribers hear the key transaction commit', async () => {
    const before = CommitCounter.commits;
    await send(`${lab.url}/lab/twin`, { key: newKey(), caller: newCaller(), body: {} });
    expect(CommitCounter.commits).toBe(before + 1);
  });
});
