// What every sample's check.mjs shares: start the built app as a process of its own (as
// `npm run start:prod` does) on a free port, send it requests as a client does, look at the
// database, and end with a verdict. A check prints one line per promise it proved and exits 1 on
// the first one broken. Node.js 20+ (fetch), and the sample's own `pg`.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { join } from 'node:path';

/** A port the kernel finds free now. */
export async function freePort() {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  server.close();
  await once(server, 'close');
  return port;
}

/**
 * Starts `dist/main.js` of the sample in `folder` with PORT set (and `env`), waits until it
 * answers HTTP, and returns its base URL and how to stop it. Its output is kept, and printed when
 * the check fails. `http: false`: an app with no HTTP server (a consumer): waits for `readyLine`
 * in its output instead.
 */
export async function startApp(folder, { env = {}, http = true, readyLine = /listening|started/i } = {}) {
  const port = await freePort();
  const child = spawn(process.execPath, ['dist/main.js'], {
    cwd: folder,
    env: { ...process.env, PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = once(child, 'exit');
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`the app exited with ${child.exitCode} before it answered:\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the app did not answer within 30 s:\n${output}`);
    }
    const ready = http
      ? await fetch(url).then(
          () => true,
          () => false,
        )
      : readyLine.test(output);
    if (ready) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    get output() {
      return output;
    },
    /** SIGTERM, as a deploy stops it; SIGKILL after 10 s. */
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Sends one request and reads its answer whole: status, headers, body text and JSON (when it is JSON). */
export async function send(url, { method = 'POST', key, token, body, headers = {} } = {}) {
  const response = await fetch(url, {
    method,
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(key === undefined ? {} : { 'idempotency-key': key }),
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...headers,
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

/** A new Idempotency-Key, as a client makes one. */
export const newKey = () => randomUUID();

/** A node-postgres pool on DATABASE_URL, loaded from the sample's own dependencies. */
export function database(folder) {
  const { Pool } = createRequire(join(folder, 'package.json'))('pg');
  return new Pool({ connectionString: process.env.DATABASE_URL, max: 2 });
}

/**
 * Runs `scenario(app)` against the sample started from `folder`: each `proved(what)` prints a
 * line; a thrown error (or `fail(what)`) prints the app's output and exits 1.
 */
export async function check(folder, scenario, options) {
  let app;
  try {
    app = await startApp(folder, options);
    await scenario(app);
    await app.stop();
  } catch (error) {
    console.error(`FAILED: ${error.message}`);
    if (app) {
      await app.stop();
      console.error(`the app's output:\n${app.output}`);
    }
    process.exit(1);
  }
}

/** Asserts `condition`, naming the promise it proves; `got` says what was seen instead when it fails. */
export function proved(condition, what, got = '') {
  if (!condition)
    throw new Error(
      `not so: ${what}${got === '' ? '' : ` (got ${typeof got === 'string' ? got : JSON.stringify(got)})`}`,
    );
  console.log(`  ok: ${what}`);
}

/**
 * What every payments app's page promises of its POST /payments (the bearer token is the caller),
 * proved as a client sees it: a retry gets the first answer's status and bytes, marked replayed,
 * and the payment is written once; the same key with another payload is a 422; ten duplicates at
 * once are 201s and 409s and write once; with `failAfterWrite` (a route that writes the same
 * payment, then fails when asked by `X-Fail: after-write`), a failure leaves nothing and frees
 * the key, and its retry writes once. `writes(caller)` counts the caller's payments, as rows a
 * whole payment leaves (`what` names them: 'payment row', 'payment row and ledger entry').
 */
export async function provePayments(folder, url, { writes, what = 'payment row', failAfterWrite }) {
  const db = database(folder);
  const keys = async (caller) =>
    (await db.query('SELECT count(*)::int AS n FROM idempotency_keys WHERE caller = $1', [caller])).rows[0].n;
  try {
    const token = `alice-${Date.now()}`;
    const key = newKey();
    const payment = { amount: 1250, currency: 'EUR' };
    const first = await send(`${url}/payments`, { key, token, body: payment });
    proved(first.status === 201, 'a keyed POST /payments is 201', first.status);
    const retry = await send(`${url}/payments`, { key, token, body: payment });
    proved(retry.status === 201 && retry.text === first.text, 'its retry gets the same status and bytes', retry.text);
    proved(retry.headers.get('idempotent-replayed') === 'true', 'the retry is marked Idempotent-Replayed: true');
    proved((await writes(token)) === 1, `one ${what} for the key`);
    const other = await send(`${url}/payments`, { key, token, body: { amount: 99, currency: 'EUR' } });
    proved(other.status === 422, 'the same key with another payload is 422', other.status);
    const bob = await send(`${url}/payments`, { key, token: `bob-${Date.now()}`, body: payment });
    proved(bob.status === 201 && bob.headers.get('idempotent-replayed') === null, "another caller's key is its own");
    proved((await send(`${url}/payments`, { token, body: payment })).status === 400, 'no key is 400');

    if (failAfterWrite) {
      const carol = `carol-${Date.now()}`;
      const failing = newKey();
      const route = `${url}${failAfterWrite}`;
      const failed = await send(route, {
        key: failing,
        token: carol,
        body: payment,
        headers: { 'x-fail': 'after-write' },
      });
      proved(failed.status === 500, 'a handler that fails after its write is 500', failed.status);
      proved((await writes(carol)) === 0 && (await keys(carol)) === 0, 'it leaves nothing written, and its key free');
      const rerun = await send(route, { key: failing, token: carol, body: payment });
      proved(rerun.status === 201 && rerun.headers.get('idempotent-replayed') === null, 'its retry runs', rerun.status);
      proved((await writes(carol)) === 1 && (await keys(carol)) === 1, 'and pays once, its key now recorded');
    }

    const storm = `storm-${Date.now()}`;
    const stormKey = newKey();
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => send(`${url}/payments`, { key: stormKey, token: storm, body: payment })),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    proved(
      statuses.every((status) => status === 201 || status === 409) && statuses.includes(201),
      'ten duplicates at once: 201s (the first and replays) and 409s (in flight), nothing else',
      statuses,
    );
    proved((await writes(storm)) === 1, `ten duplicates at once write one ${what}`);
  } finally {
    await db.end();
  }
}

/** Whether the sample in `folder` can load the package `name` (what its own install holds). */
export function installed(folder, name) {
  try {
    createRequire(join(folder, 'package.json')).resolve(name);
    return true;
  } catch {
    return false;
  }
}
