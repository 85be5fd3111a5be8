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
