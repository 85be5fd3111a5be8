import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { keyRows, paymentCount, sql } from '../support/database.js';
import { appsOn, databaseUrl, HTTP_PLATFORMS, type HttpPlatform, type RunningApp } from '../support/apps.js';
import { newCaller, newKey, send, validPayment } from '../support/http.js';

/** Starts the built demo (`npm start`'s entry point) as a separate process on `port`. */
async function startDemoProcess(port: number, latencyMs: number, platform: HttpPlatform): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['dist/esm/demo/main.js'], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl(),
      PORT: String(port),
      DEMO_PLATFORM: platform,
      DEMO_LATENCY_MS: String(latencyMs),
      IDEMPOTENCY_SWEEP_INTERVAL_MS: '0',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + 30_000;
  while (!output.includes('listening on')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`demo did not start:\n${output}`);
    await sleep(50);
  }
  return child;
}

describe.each(HTTP_PLATFORMS)('on %s', (platform) => {
  const { startDemo } = appsOn(platform);

  describe('a process killed mid-request', () => {
    let demo: RunningApp;
    beforeAll(async () => (demo = await startDemo()));
    afterAll(async () => {
      await demo.close();
    });

    it('leaves no stuck key and no half-written payment: the retry runs once', async () => {
      const port = 20_000 + Math.floor(Math.random() * 20_000);
      const child = await startDemoProcess(port, 10_000, platform);
      const caller = newCaller();
      const key = newKey();
      const inFlight = send(`http://127.0.0.1:${port}/payments`, { key, caller, body: validPayment }).catch((error: Error) => error);

      // Wait until the handler holds the key: its transaction is open and idle inside the latency.
      const deadline = Date.now() + 10_000;
      for (;;) {
        const [{ n }] = await sql(`SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND granted`);
        if (Number(n) > 0) break;
        if (Date.now() > deadline) throw new Error('the request never reserved its key');
        await sleep(20);
      }
      const duplicate = await send(`http://127.0.0.1:${port}/payments`, { key, caller, body: validPayment });
      expect(duplicate.status).toBe(409);

      child.kill('SIGKILL');
      await once(child, 'exit');
      expect(await inFlight).toHaveProperty('code', 'ECONNRESET');

      // The server notices the dead connection and rolls its transaction back at once: no TTL wait.
      const retry = await send(`${demo.url}/payments`, { key, caller, body: validPayment });
      expect(retry.status).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
      expect(await paymentCount(caller)).toBe(1);
      expect(await keyRows(caller)).toEqual([{ key, endpoint: 'POST /payments', state: 'completed', status: 201 }]);
    });
  });
});
