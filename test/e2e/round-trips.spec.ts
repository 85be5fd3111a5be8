import pg from 'pg';
import { paymentCount } from '../support/database.js';
import { type RunningApp, startLab } from '../support/apps.js';
import { CommitCounter } from '../support/commit-counter.subscriber.js';
import { newCaller, newKey, send } from '../support/http.js';

/** The SQL texts the app's pg clients send (one per round trip) while `run` runs. */
async function sentQueries(run: () => Promise<unknown>): Promise<string[]> {
  const original = pg.Client.prototype.query;
  const sent: string[] = [];
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [query] = args as [string | { text: string }];
    sent.push(typeof query === 'string' ? query : query.text);
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    await run();
  } finally {
    pg.Client.prototype.query = original;
  }
  return sent;
}

const countRoundTrips = async (run: () => Promise<unknown>): Promise<number> => (await sentQueries(run)).length;

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

  it('sends its statements prepared (EXECUTE) by default', async () => {
    const sent = await sentQueries(() => send(`${lab.url}/lab/twin`, { key: newKey(), caller: newCaller(), body: {} }));
    expect(sent.filter((text) => /EXECUTE nestjs_pg_idempotency_/.test(text))).toHaveLength(2);
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

describe('preparedStatements: false (behind a pooler in transaction mode)', () => {
  it('sends the statements whole, in as many round trips, and behaves the same', async () => {
    const lab = await startLab({ preparedStatements: false, replayCache: false });
    try {
      const caller = newCaller();
      const key = newKey();
      await send(`${lab.url}/lab/twin`, { key: newKey(), caller, body: {} });
      const sent = await sentQueries(() => send(`${lab.url}/lab/twin`, { key, caller, body: {} }));
      expect(sent).toHaveLength(4);
      expect(sent.some((text) => /PREPARE|EXECUTE/.test(text))).toBe(false);
      const replay = await send(`${lab.url}/lab/twin`, { key, caller, body: {} });
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(await paymentCount(caller)).toBe(2);
    } finally {
      await lab.close();
    }
  });
});
