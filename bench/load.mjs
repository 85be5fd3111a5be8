// The load driver: autocannon, in its own process (not the servers', not the orchestrator's),
// driven over IPC. Every run POSTs /payments with `Authorization: Bearer <token>` and either a
// fresh UUID Idempotency-Key per request ('fresh'), one fixed key ('fixed') or none ('none').
// Latency percentiles are computed here from every 2xx response time autocannon reports
// (floating-point milliseconds), not from its integer-millisecond histogram.
import autocannon from 'autocannon';
import { randomUUID } from 'node:crypto';
import { PAYMENT_BODY, paymentHeaders } from './payment-request.mjs';
import { answer } from './processes.mjs';

let current;

answer({
  run,
  /** Ends the run in progress now (its result is still returned by `run`). */
  stop() {
    current?.stop();
    return {};
  },
  /** One request, to create the key a replay run then repeats. */
  async prime({ url, token, key }) {
    const response = await fetch(`${url}/payments`, {
      method: 'POST',
      headers: paymentHeaders(token, key),
      body: PAYMENT_BODY,
    });
    await response.arrayBuffer();
    return { status: response.status, replayed: response.headers.get('idempotent-replayed') === 'true' };
  },
});

/**
 * One autocannon run: `{ url, connections, seconds, mode, token, key? }` → its measurements;
 * with `requests`, it sends that many requests instead of running for `seconds`.
 */
function run({ url, connections, seconds, requests: amount, mode, token, key }) {
  const headers = paymentHeaders(token, mode === 'fixed' ? key : undefined);
  const request = { method: 'POST', path: '/payments', headers, body: PAYMENT_BODY };
  if (mode === 'fresh') {
    request.setupRequest = (req) => {
      req.headers['idempotency-key'] = randomUUID();
      return req;
    };
  }
  const latencies = [];
  const statuses = {};
  let responses = 0;
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const instance = autocannon(
      {
        url,
        connections,
        ...(amount ? { amount } : { duration: seconds }),
        requests: [request],
        timeout: amount ? 300 : 30,
      },
      (error, result) => {
        current = undefined;
        if (error) return reject(error);
        const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
        latencies.sort((a, b) => a - b);
        const count = (prefix) => Object.entries(statuses).reduce((n, [s, c]) => (s.startsWith(prefix) ? n + c : n), 0);
        resolve({
          connections,
          seconds: elapsed,
          responses,
          rps: responses / elapsed,
          ok: count('2'),
          non2xx: responses - count('2'),
          server5xx: count('5'),
          statuses,
          errors: result.errors,
          timeouts: result.timeouts,
          p50: percentile(latencies, 0.5),
          p99: percentile(latencies, 0.99),
          max: latencies.at(-1) ?? null,
        });
      },
    );
    current = instance;
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      responses += 1;
      statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
    });
  });
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted, q) {
  if (!sorted.length) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}
