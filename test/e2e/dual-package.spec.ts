import { startDemoProcess as startProcess } from '../support/demo-process.cjs';
import { databaseUrl } from '../support/apps.js';
import { sql } from '../support/database.js';
import { newCaller, newKey, send } from '../support/http.js';
import type { DemoProcess } from '../support/processes.js';

const amounts = async (caller: string): Promise<number[]> =>
  (await sql<{ amount: number }>('SELECT amount FROM payments WHERE caller = $1 ORDER BY amount', [caller])).map(
    (row) => row.amount,
  );

// The app (its own process, plain Node.js: real ESM and CommonJS loading) imports the ESM build
// and requires the CommonJS one: each write below goes through one copy's way in.
describe('an app that loads both builds of the package', () => {
  let app: DemoProcess;
  beforeAll(async () => {
    app = await startProcess({ databaseUrl: databaseUrl(), script: 'test/e2e/dual-package.app.mjs' });
  });
  afterAll(() => app?.stop());

  it("writes through either copy inside the key's transaction, and replays the outcome", async () => {
    const caller = newCaller();
    const key = newKey();
    const first = await send(`${app.url}/dual`, { key, body: { caller } });
    expect(first.status).toBe(201);
    expect(first.json).toEqual({ esm: true, cjs: true });
    expect(await amounts(caller)).toEqual([1, 2, 3]);

    const retry = await send(`${app.url}/dual`, { key, body: { caller } });
    expect(retry.status).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toEqual(first.body);
    expect(await amounts(caller)).toEqual([1, 2, 3]);
  });

  it('rolls back the writes of both copies when the handler fails, and keeps no key', async () => {
    const caller = newCaller();
    const failed = await send(`${app.url}/dual`, { key: newKey(), body: { caller, fail: true } });
    expect(failed.status).toBe(500);
    expect(await amounts(caller)).toEqual([]);
    expect(await sql('SELECT 1 FROM idempotency_keys WHERE caller = $1', [caller])).toEqual([]);
  });
});
