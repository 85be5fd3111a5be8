// The duplicate-storm driver, in its own process: waves of `size` concurrent POST /payments
// that share one Idempotency-Key, back to back until told to stop. Each wave uses a fresh key
// and its own caller (bearer token `<prefix>-<wave>`), so the orchestrator can count the
// executions of each storm key in the payments table. Mode 'unauthenticated' sends the same
// waves without a bearer token (401 at the guard, no SQL): the control for what merely
// receiving that many requests costs on this machine.
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { PAYMENT_BODY, paymentHeaders } from './payment-request.mjs';
import { answer } from './processes.mjs';

let storm;

answer({
  /** Starts the waves; returns at once. */
  start({ url, size, tokenPrefix, mode = 'duplicate' }) {
    if (storm) throw new Error('a storm is already running');
    storm = { stopping: false };
    storm.done = waves(storm, new URL(url), size, tokenPrefix, mode);
    return {};
  },
  /** Lets the wave in flight finish, then returns every wave's outcome. */
  async stop() {
    storm.stopping = true;
    const result = await storm.done;
    storm = undefined;
    return result;
  },
});

async function waves(state, url, size, tokenPrefix, mode) {
  const agent = new Agent({ keepAlive: true, maxSockets: size, maxFreeSockets: size });
  const result = [];
  try {
    do {
      const token = `${tokenPrefix}-${result.length + 1}`;
      const key = randomUUID();
      const headers = paymentHeaders(token, key);
      if (mode === 'unauthenticated') delete headers.authorization;
      const started = process.hrtime.bigint();
      const outcomes = await Promise.all(Array.from({ length: size }, () => post(url, agent, headers)));
      const wave = {
        token,
        key,
        ms: Number(process.hrtime.bigint() - started) / 1e6,
        statuses: {},
        replayed: 0,
        errors: 0,
      };
      for (const outcome of outcomes) {
        if (outcome.error) wave.errors += 1;
        else wave.statuses[outcome.status] = (wave.statuses[outcome.status] ?? 0) + 1;
        if (outcome.replayed) wave.replayed += 1;
      }
      result.push(wave);
    } while (!state.stopping);
  } finally {
    agent.destroy();
  }
  return result;
}

function post(url, agent, headers) {
  return new Promise((resolve) => {
    const req = request(
      { host: url.hostname, port: url.port, path: '/payments', method: 'POST', agent, headers, timeout: 60_000 },
      (res) => {
        res.resume();
        res.on('end', () =>
          resolve({ status: res.statusCode, replayed: res.headers['idempotent-replayed'] === 'true' }),
        );
        res.on('error', (error) => resolve({ error: error.message }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (error) => resolve({ error: error.message }));
    req.end(PAYMENT_BODY);
  });
}
