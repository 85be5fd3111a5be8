import { HTTP_PLATFORMS } from '../support/apps.js';
import { handlerBackends, keyLockHolders, sql, until } from '../support/database.js';
import { type Answer, newCaller, newKey, send, validPayment } from '../support/http.js';
import { type DemoProcess, startDemoProcess, waitFor } from '../support/processes.js';

/** What one client saw of one key, first try to last. */
interface Trail {
  key: string;
  seen: string[];
  last?: Answer;
}

/** What a client may see on the way: an answer's status (with its problem type), or the connection failing. */
const describeAnswer = (answer: Answer) =>
  answer.json?.type ? `${answer.status} ${String(answer.json.type).split(':').pop()}` : String(answer.status);

/**
 * A client that pays once with `key`: first on `first`, and, when that instance answers 503 or
 * drops the connection (it is shutting down), on `second`, as a load balancer would send the
 * retry at once; a 409 is retried once the key's holder has ended (its lock is free). Every
 * answer is kept in the trail.
 */
async function payWithRetries(key: string, caller: string, first: DemoProcess, second: DemoProcess): Promise<Trail> {
  const trail: Trail = { key, seen: [] };
  let target = first;
  for (let attempt = 0; attempt < 50; attempt++) {
    let answer: Answer;
    try {
      answer = await send(`${target.url}/payments`, { key, caller, body: validPayment });
    } catch (error) {
      trail.seen.push(`connection ${(error as NodeJS.ErrnoException).code ?? 'failed'}`);
      target = second;
      continue;
    }
    trail.seen.push(describeAnswer(answer));
    trail.last = answer;
    if (answer.status === 201) return trail;
    if (answer.status === 503) target = second;
    else if (answer.status === 409)
      await until(async () => (await keyLockHolders(key, caller, 'POST /payments')) === 0, "the key's holder to end");
    else return trail;
  }
  return trail;
}

describe.each(HTTP_PLATFORMS)('the graceful drain, on %s (two demo processes, SIGTERM under load)', (platform) => {
  it('keys in flight at SIGTERM finish on the first instance; new ones get 503 shutting-down and go to the second: 0 lost, 0 doubled, no other 5xx', async () => {
    const env = { DEMO_PLATFORM: platform, DEMO_LATENCY_MS: '1500', IDEMPOTENCY_DRAIN_TIMEOUT_MS: '20000' };
    const [first, second] = await Promise.all([
      startDemoProcess(env),
      startDemoProcess({ ...env, DEMO_LATENCY_MS: '100' }),
    ]);
    const caller = newCaller();
    try {
      // Ten payments in flight on the first instance: written, inside their handlers.
      const inFlight = Array.from({ length: 10 }, () => payWithRetries(newKey(), caller, first, second));
      await handlerBackends(10);
      let closed = false;
      const exited = first.stop().finally(() => (closed = true));
      // Then more clients on four lanes, each starting when its lane's last one has its payment,
      // while the first instance drains and until two more after it closed (15 a lane at most).
      const lane = async (): Promise<Trail[]> => {
        const trails: Trail[] = [];
        for (let afterClose = 0; trails.length < 15 && afterClose < 2; afterClose += closed ? 1 : 0) {
          trails.push(await payWithRetries(newKey(), caller, first, second));
        }
        return trails;
      };
      const later = (await Promise.all([lane(), lane(), lane(), lane()])).flat();
      const trails = [...(await Promise.all(inFlight)), ...later];
      expect(await exited).toBe(0);

      // Every client ended with its payment, and every payment was made exactly once.
      expect(trails.filter((trail) => trail.last?.status !== 201)).toEqual([]);
      const payments = await sql<{ id: string }>('SELECT id FROM payments WHERE caller = $1', [caller]);
      expect(payments).toHaveLength(trails.length);
      expect(new Set(trails.map((trail) => trail.last!.json.id))).toEqual(new Set(payments.map(({ id }) => id)));
      // The keys in flight finished where they started: a first execution, no retry needed.
      for (const trail of await Promise.all(inFlight)) expect(trail.seen).toEqual(['201']);
      // Nothing but the documented answers on the way: 503 shutting-down, or a connection refused once
      // it closed; on Fastify, its own 503 to a request on a kept-alive connection while it closes
      // (`return503OnClosing`: no problem document, nothing run).
      const seen = new Set(trails.flatMap((trail) => trail.seen));
      const documented = [
        '201',
        '409 key-in-use',
        '503 shutting-down',
        'connection ECONNREFUSED',
        'connection ECONNRESET',
      ];
      for (const answer of seen) expect(platform === 'fastify' ? [...documented, '503'] : documented).toContain(answer);
      expect(seen.has('503 shutting-down')).toBe(true);
      // The ten, and any later client that reached it before the signal did.
      const drained = /draining: waiting up to 20000 ms for (\d+) key\(s\) in flight/.exec(first.output());
      expect(Number(drained?.[1])).toBeGreaterThanOrEqual(10);
    } finally {
      await Promise.all([first.kill(), second.kill()]);
    }
  }, 90_000);

  it('answers 503 shutting-down with Retry-After and Connection: close while it drains, and runs nothing', async () => {
    const env = { DEMO_PLATFORM: platform, DEMO_LATENCY_MS: '3000', IDEMPOTENCY_DRAIN_TIMEOUT_MS: '20000' };
    const app = await startDemoProcess(env);
    const caller = newCaller();
    try {
      const held = send(`${app.url}/payments`, { key: newKey(), caller, body: validPayment });
      await handlerBackends(1);
      const exited = app.stop();
      // The drain has begun once its log line is out; the HTTP server still answers.
      await waitFor('the drain to begin', async () => app.output().includes('draining:'));
      const refusedKey = newKey();
      const refused = await send(`${app.url}/payments`, {
        key: refusedKey,
        caller: `${caller}-refused`,
        body: validPayment,
      });
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.headers.connection).toBe('close');
      expect(refused.headers['content-type']).toContain('application/problem+json');
      expect(refused.json).toMatchObject({ type: 'urn:nestjs-pg-idempotency:shutting-down', status: 503 });
      expect((await held).status).toBe(201);
      expect(await exited).toBe(0);
      expect(await sql('SELECT 1 FROM payments WHERE caller = $1', [`${caller}-refused`])).toEqual([]);
      expect(await sql('SELECT 1 FROM idempotency_keys WHERE key = $1', [refusedKey])).toEqual([]);
    } finally {
      await app.kill();
    }
  }, 60_000);
});
