// Shared pieces of the fault harness: demo processes, a retrying client, SQL, assertions.
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { startDemoProcess } from '../support/demo-process.cjs';

/** Counts what the harness did, for the summary. */
export const stats = { requests: 0, retries: 0, duplicates: 0, lostWrites: 0 };

/** Starts the built demo as its own process; `reusedPort` restarts it on the same address. */
export function startDemo(databaseUrl, env = {}, reusedPort = undefined) {
  return startDemoProcess({ databaseUrl, env, port: reusedPort });
}

/** One HTTP request; `headers` may hold arrays (several header lines). Never throws on HTTP status. */
export function send(url, { method = 'POST', headers = {}, body, timeoutMs = 15_000 } = {}) {
  stats.requests++;
  return new Promise((resolve) => {
    const req = httpRequest(url, { method, headers, agent: false, timeout: timeoutMs }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => {
        const buffer = Buffer.concat(chunks);
        let json;
        try {
          json = JSON.parse(buffer.toString('utf8'));
        } catch {}
        resolve({ status: res.statusCode, headers: res.headers, body: buffer, json });
      });
      res.on('error', (error) => resolve({ status: 0, error }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (error) => resolve({ status: 0, error }));
    req.end(body);
  });
}

/** A JSON POST with a key and a bearer token. */
export function post(url, { key, caller, body, headers = {} }) {
  const all = { 'content-type': 'application/json', authorization: `Bearer ${caller}`, ...headers };
  if (key !== undefined) all['idempotency-key'] = key;
  return send(url, { headers: all, body: typeof body === 'string' ? body : JSON.stringify(body) });
}

/**
 * A careful client: the same key on every try; retries network errors, 5xx and 409 (after
 * Retry-After), stops on anything else. Returns the final answer and how many tries it took.
 */
export async function postWithRetries(url, request, { deadlineMs = 60_000 } = {}) {
  const deadline = Date.now() + deadlineMs;
  for (let tries = 1; ; tries++) {
    const answer = await post(url(), request);
    const retryable = answer.status === 0 || answer.status >= 500 || answer.status === 409;
    if (!retryable) return { answer, tries };
    if (Date.now() > deadline) throw new Error(`gave up after ${tries} tries: last status ${answer.status}`);
    stats.retries++;
    const retryAfter = Number(answer.headers?.['retry-after'] ?? 0);
    await sleep(retryAfter > 0 ? retryAfter * 1000 : 100 + Math.random() * 200);
  }
}

export const newKey = () => randomUUID();
export const newCaller = (scenario) => `${scenario}-${randomUUID()}`;

/** A pg pool to look at rows the way a user would. */
export function database(url) {
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  pool.on('error', () => undefined);
  return {
    rows: async (text, params = []) => (await pool.query(text, params)).rows,
    pool,
    end: () => pool.end(),
  };
}

/** Throws a readable error when `condition` is false. */
export function check(condition, message) {
  if (!condition) throw new Error(message);
}
