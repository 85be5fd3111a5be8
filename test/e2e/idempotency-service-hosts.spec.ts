import { randomUUID } from 'node:crypto';
import { sql } from '../support/database.js';
import { newCaller } from '../support/http.js';
import { amounts, CONSUMER_APP } from '../support/message-consumers.js';
import { type DemoProcess, startAppProcess, waitFor } from '../support/processes.js';

/** Every host a function run by `IdempotencyService.run()` writes through (the test app's HOST). */
const HOSTS = ['typeorm', 'cls', 'drizzle', 'prisma', 'cls-prisma'] as const;

interface CallAnswer {
  kind: string;
  value?: unknown;
}

/** Calls the app's `POST /calls/:key`: `IdempotencyService.run()` over one payment write. */
async function call(app: DemoProcess, key: string, body: object): Promise<CallAnswer> {
  const response = await fetch(`${app.url}/calls/${key}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (response.status !== 201) throw new Error(`POST /calls answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as CallAnswer;
}

/** How many backends hold a transaction that has written (a key's lock and lookup alone assign no transaction id). */
async function writingTransactions(): Promise<number> {
  const rows = await sql(
    `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction' AND backend_xid IS NOT NULL`,
  );
  return rows.length;
}

describe.each(HOSTS)('IdempotencyService.run() on the %s host, with processes', (host) => {
  const apps: DemoProcess[] = [];
  const started = async () => {
    const app = await startAppProcess(CONSUMER_APP, { TRANSPORT: 'none', HOST: host });
    apps.push(app);
    return app;
  };
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.kill().catch(() => undefined)));
  });

  it('50 concurrent calls with one key over two processes: one effect; every other call is told the key is held, or given the recorded result', async () => {
    const [first, second] = await Promise.all([started(), started()]);
    const [caller, key] = [newCaller(), randomUUID()];
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        call(index % 2 === 0 ? first : second, key, { caller, amount: 7, holdMs: 200 }),
      ),
    );
    const kinds = answers.map((answer) => answer.kind);
    expect(kinds.filter((kind) => kind === 'executed')).toHaveLength(1);
    expect(kinds.every((kind) => ['executed', 'held', 'replayed'].includes(kind))).toBe(true);
    for (const answer of answers) if (answer.kind !== 'held') expect(answer.value).toEqual({ paid: 7 });
    expect(await amounts(caller)).toEqual([7]);
    expect(await call(second, key, { caller, amount: 7 })).toEqual({ kind: 'replayed', value: { paid: 7 } });
    expect(await amounts(caller)).toEqual([7]);
  });

  it('a process SIGKILLed while the function runs leaves nothing behind: the retry on another process runs it once', async () => {
    const [victim, survivor] = await Promise.all([started(), started()]);
    const [caller, key] = [newCaller(), randomUUID()];
    const inFlight = call(victim, key, { caller, amount: 9, holdMs: 60_000 }).catch((error: Error) => error);
    await waitFor('the function to hold its key, its write done', async () => (await writingTransactions()) === 1);
    expect(await call(survivor, key, { caller, amount: 9 })).toEqual({ kind: 'held' });
    await victim.kill();
    expect(await inFlight).toMatchObject({ message: 'fetch failed' });
    // PostgreSQL rolls the dead process's transaction back once it notices its connection closed:
    // until then the key is held, and a retry is told so, as a client retrying a 409 would be.
    const retried = await waitFor('the retry to find the key free', async () => {
      const answer = await call(survivor, key, { caller, amount: 9 });
      return answer.kind === 'held' ? undefined : answer;
    });
    expect(retried).toEqual({ kind: 'executed', value: { paid: 9 } });
    expect(await amounts(caller)).toEqual([9]);
    expect(await sql(`SELECT state FROM idempotency_keys WHERE key = $1`, [key])).toEqual([{ state: 'completed' }]);
  });
});
