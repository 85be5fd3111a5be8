import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer } from 'node:net';
import { Readable } from 'node:stream';
import { IdempotentClient, IdempotentRequestError, type RetryInfo } from '../../src/client/index.js';
import { keyRows, paymentCount } from '../support/database.js';
import { appsOn, HTTP_PLATFORMS, type RunningApp } from '../support/apps.js';
import { LabController } from '../support/common-routes.controller.js';
import { startDroppingProxy } from '../support/dropping-proxy.js';
import { entered, release } from '../support/latch.js';
import { newCaller, newKey, validPayment } from '../support/http.js';
import { FailurePolicyController } from './failure-policy.controller.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** A payment request as a browser or a Node service would send it. */
const payment = (caller: string, body: unknown = validPayment): RequestInit => ({
  method: 'POST',
  headers: { authorization: `Bearer ${caller}`, 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe.each(HTTP_PLATFORMS)('on %s', (platform) => {
  const { startDemo, startLab } = appsOn(platform);

  describe('attempts that time out after reaching the server', () => {
    let demo: RunningApp;
    beforeAll(async () => (demo = await startDemo({ latencyMs: 600 })));
    afterAll(() => demo.close());

    it('an operation aborted by its signal rejects with its key; retrying with that key pays once', async () => {
      const caller = newCaller();
      const client = new IdempotentClient();
      const failure = await client
        .fetch(`${demo.url}/payments`, { ...payment(caller), signal: AbortSignal.timeout(200) })
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(IdempotentRequestError);
      const { key, aborted } = failure as IdempotentRequestError;
      expect(aborted).toBe(true);
      const again = await new IdempotentClient({ baseDelayMs: 10, maxDelayMs: 5_000 }).fetch(`${demo.url}/payments`, {
        ...payment(caller),
        idempotencyKey: key,
      });
      expect(again.response.status).toBe(201);
      expect(await paymentCount(caller)).toBe(1);
      expect((await keyRows(caller)).map((row) => row.key)).toEqual([key]);
    });

    it('attemptTimeoutMs gives up a slow attempt and retries it with the same key: one payment, the stored answer', async () => {
      const caller = newCaller();
      const retries: RetryInfo[] = [];
      const client = new IdempotentClient({
        attemptTimeoutMs: 200,
        baseDelayMs: 10,
        maxDelayMs: 5_000,
        maxAttempts: 8,
        onRetry: (retry) => retries.push(retry),
      });
      const result = await client.fetch(`${demo.url}/payments`, payment(caller));
      expect(result.response.status).toBe(201);
      expect(result.replayed).toBe(true);
      expect(retries[0].reason).toMatchObject({ name: 'TimeoutError' });
      expect(new Set(retries.map((retry) => retry.key))).toEqual(new Set([result.key]));
      expect(await paymentCount(caller)).toBe(1);
    });
  });

  describe('nestjs-pg-idempotency/client against the demo API', () => {
    let demo: RunningApp;
    beforeAll(async () => (demo = await startDemo({ latencyMs: 0 })));
    afterAll(() => demo.close());

    it('pays once with a new UUID v7 key, not a replay', async () => {
      const caller = newCaller();
      const result = await new IdempotentClient().fetch(`${demo.url}/payments`, payment(caller));
      expect(result.response.status).toBe(201);
      expect(result.replayed).toBe(false);
      expect(result.attempts).toBe(1);
      expect(result.key).toMatch(UUID_V7);
      expect(await keyRows(caller)).toEqual([
        { key: result.key, endpoint: 'POST /payments', state: 'completed', status: 201 },
      ]);
    });

    it('the answer lost after the server committed: the retry carries the same key and gets the original body', async () => {
      const proxy = await startDroppingProxy(demo.url, 1);
      try {
        const caller = newCaller();
        const retries: RetryInfo[] = [];
        const client = new IdempotentClient({ baseDelayMs: 10, onRetry: (retry) => retries.push(retry) });
        const result = await client.fetch(`${proxy.url}/payments`, payment(caller));
        const body = Buffer.from(await result.response.arrayBuffer());
        expect(proxy.forwarded()).toBe(2);
        expect(proxy.dropped).toHaveLength(1);
        expect(result.response.status).toBe(201);
        expect(result.replayed).toBe(true);
        expect(result.attempts).toBe(2);
        // The first attempt failed with a network error (fetch's TypeError), not an HTTP answer.
        expect(retries.map((retry) => [retry.attempt, retry.key, (retry.reason as Error).name])).toEqual([
          [1, result.key, 'TypeError'],
        ]);
        expect(body.equals(proxy.dropped[0])).toBe(true);
        expect(await paymentCount(caller)).toBe(1);
      } finally {
        await proxy.close();
      }
    });

    it('never retries a 4xx other than 409: a validation 400 is final', async () => {
      const caller = newCaller();
      const retries: RetryInfo[] = [];
      const result = await new IdempotentClient({ onRetry: (retry) => retries.push(retry) }).fetch(
        `${demo.url}/payments`,
        payment(caller, { amount: -1, currency: 'EUR' }),
      );
      expect(result.response.status).toBe(400);
      expect(result.attempts).toBe(1);
      expect(retries).toEqual([]);
    });

    it('a caller-chosen key is sent as is: a second operation with it is a replay', async () => {
      const caller = newCaller();
      const client = new IdempotentClient();
      const key = newKey();
      const first = await client.fetch(`${demo.url}/payments`, { ...payment(caller), idempotencyKey: key });
      const again = await client.fetch(`${demo.url}/payments`, { ...payment(caller), idempotencyKey: key });
      expect([first.key, again.key]).toEqual([key, key]);
      expect([first.replayed, again.replayed]).toEqual([false, true]);
      expect(await again.response.text()).toBe(await first.response.text());
      expect(await paymentCount(caller)).toBe(1);
    });
  });

  describe('nestjs-pg-idempotency/client: what it retries and how long it waits', () => {
    it('a 409 while the first attempt runs: waits the Retry-After (1 s), then gets the replay', async () => {
      const lab = await startLab({}, { controllers: [LabController] });
      try {
        const caller = newCaller();
        const key = newKey();
        const url = `${lab.url}/lab/held-write`;
        const first = new IdempotentClient({ baseDelayMs: 50 }).fetch(url, {
          ...payment(caller, {}),
          idempotencyKey: key,
        });
        await entered(caller);
        const retries: RetryInfo[] = [];
        const started = Date.now();
        // The first attempt holds the key until the duplicate's 409 came back; then it answers.
        const onRetry = (retry: RetryInfo) => {
          retries.push(retry);
          release(caller);
        };
        const duplicate = await new IdempotentClient({ baseDelayMs: 50, onRetry }).fetch(url, {
          ...payment(caller, {}),
          idempotencyKey: key,
        });
        const original = await first;
        expect(retries[0].reason).toBeInstanceOf(Response);
        expect((retries[0].reason as Response).status).toBe(409);
        expect(retries[0].delayMs).toBeGreaterThanOrEqual(1_000);
        expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
        expect(duplicate.replayed).toBe(true);
        expect(duplicate.response.status).toBe(201);
        expect(await duplicate.response.text()).toBe(await original.response.text());
        expect(await paymentCount(caller)).toBe(1);
      } finally {
        await lab.close();
      }
    });

    it('retries a 5xx with the same key: the second attempt succeeds and nothing is paid twice', async () => {
      const lab = await startLab({}, { controllers: [LabController, FailurePolicyController] });
      try {
        const caller = newCaller();
        const result = await new IdempotentClient({ baseDelayMs: 10 }).fetch(
          `${lab.url}/lab/flaky`,
          payment(caller, {}),
        );
        expect(result.response.status).toBe(201);
        expect(result.attempts).toBe(2);
        expect(await result.response.json()).toMatchObject({ attempt: 2 });
        expect(await paymentCount(caller)).toBe(1);
      } finally {
        await lab.close();
      }
    });

    it('gives up after maxAttempts on a persistent 503 and returns the last answer', async () => {
      const lab = await startLab({}, { controllers: [LabController, FailurePolicyController] });
      try {
        const caller = newCaller();
        const result = await new IdempotentClient({ maxAttempts: 3, baseDelayMs: 10 }).fetch(
          `${lab.url}/lab/status/503`,
          payment(caller, {}),
        );
        expect(result.response.status).toBe(503);
        expect(result.attempts).toBe(3);
      } finally {
        await lab.close();
      }
    });

    it.each([429, 422, 401])('does not retry a %i', async (status) => {
      const lab = await startLab({}, { controllers: [LabController, FailurePolicyController] });
      try {
        const result = await new IdempotentClient({ baseDelayMs: 10 }).fetch(
          `${lab.url}/lab/status/${status}`,
          payment(newCaller(), {}),
        );
        expect(result.response.status).toBe(status);
        expect(result.attempts).toBe(1);
      } finally {
        await lab.close();
      }
    });

    it('network errors are retried, then reported with the key to retry with later', async () => {
      const port = await closedPort();
      const retries: RetryInfo[] = [];
      const client = new IdempotentClient({ maxAttempts: 3, baseDelayMs: 10, onRetry: (retry) => retries.push(retry) });
      const failure = await client
        .fetch(`http://127.0.0.1:${port}/payments`, payment('nobody'))
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(IdempotentRequestError);
      expect(failure).toMatchObject({ attempts: 3, key: expect.stringMatching(UUID_V7) });
      expect(retries.map((retry) => retry.key)).toEqual([
        (failure as IdempotentRequestError).key,
        (failure as IdempotentRequestError).key,
      ]);
    });

    it('an abort during the backoff ends it at once, with no further attempt', async () => {
      const port = await closedPort();
      const controller = new AbortController();
      const retries: RetryInfo[] = [];
      let backingOff!: () => void;
      const inBackoff = new Promise<void>((resolve) => (backingOff = resolve));
      const onRetry = (retry: RetryInfo) => {
        retries.push(retry);
        backingOff();
      };
      const client = new IdempotentClient({ baseDelayMs: 60_000, maxDelayMs: 60_000, random: () => 1, onRetry });
      const started = Date.now();
      const pending = client
        .fetch(`http://127.0.0.1:${port}/`, { method: 'POST', signal: controller.signal })
        .catch((error: Error) => error);
      // The first attempt failed and the client waits its 60 s backoff.
      await inBackoff;
      controller.abort();
      const failure = await pending;
      expect(failure).toBeInstanceOf(IdempotentRequestError);
      expect(failure).toMatchObject({ aborted: true, attempts: 1, key: retries[0].key });
      expect(((failure as IdempotentRequestError).cause as Error).name).toBe('AbortError');
      expect(retries).toHaveLength(1);
      expect(Date.now() - started).toBeLessThan(5_000);
    });

    it.each([
      ['a web ReadableStream', () => new ReadableStream({ start: (controller) => controller.close() })],
      ['a Node Readable', () => Readable.from(['{"amount":1}'])],
    ])('refuses %s as the body, which could not be sent again', async (_kind, body) => {
      await expect(
        new IdempotentClient().fetch('http://127.0.0.1:9/', {
          method: 'POST',
          body: body(),
          duplex: 'half',
        } as unknown as RequestInit),
      ).rejects.toThrow(/stream body cannot be sent again/);
    });
  });
});

describe('attemptTimeoutMs and the answer that came in time', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = createHttpServer((_request, response) => {
      response.writeHead(201, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ id: 'pay_1', charged: true }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}/payments`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('its body can still be read after the attempt timeout has passed', async () => {
    const { response, attempts } = await new IdempotentClient({ attemptTimeoutMs: 200 }).fetch(url, {
      method: 'POST',
      body: '{}',
    });
    expect([response.status, attempts]).toEqual([201, 1]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await expect(response.json()).resolves.toEqual({ id: 'pay_1', charged: true });
  });
});
