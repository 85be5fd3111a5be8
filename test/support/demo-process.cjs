// The built demo (`npm start`'s entry point, dist/esm/demo/main.js) as an OS process of its own,
// for the suites that kill, restart or multiply app instances (Jest, through processes.ts) and
// for the fault harness (test/faults, plain ESM): CommonJS, so that both can load it.
//
// With DEMO_STACK=nest11 in the environment the demo runs on NestJS 11 and TypeORM 0.3 from
// compat/nest11 (test/support/nest11-stack.mjs), as `npm run test:nest11` runs the suites.
const { spawn } = require('node:child_process');
const { once } = require('node:events');
const { join } = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const { pathToFileURL } = require('node:url');

const STACKS = { nest12: [], nest11: ['--import', pathToFileURL(join(__dirname, 'nest11-stack.mjs')).href] };

/**
 * Starts the demo on `databaseUrl` with `env` (its sweeper off unless `env` turns it on), or
 * `script` instead (an app of a test's own that prints the same line, on the root install), and
 * waits until it listens: on `port` when given (a restart on the same address), else on a port
 * the system picks. Resolves `{ url, port, child, output(), stop(), kill() }`: `stop()` sends
 * SIGTERM and resolves the exit code, `kill()` sends SIGKILL.
 */
async function startDemoProcess({ databaseUrl, env = {}, port = 0, script }) {
  const stack = script ? 'nest12' : process.env.DEMO_STACK || 'nest12';
  if (!STACKS[stack]) throw new Error(`DEMO_STACK must be "nest12" or "nest11", got "${stack}"`);
  const child = spawn(process.execPath, [...STACKS[stack], script ?? 'dist/esm/demo/main.js'], {
    env: { ...process.env, DATABASE_URL: databaseUrl, PORT: String(port), IDEMPOTENCY_SWEEP_INTERVAL_MS: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = once(child, 'exit');
  const deadline = Date.now() + 30_000;
  let listening;
  while (!(listening = /listening on (http:\/\/127\.0\.0\.1:(\d+))\r?\n/.exec(output))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the demo did not start:\n${output}`);
    }
    await sleep(50);
  }
  if (stack === 'nest11') {
    // The banner names compat's version; the resolve hook (its own thread, so its line may come a
    // moment later) reports where the demo's @nestjs/core really came from.
    const loaded = () =>
      /nest11-stack: @nestjs\/core 11\./.test(output) &&
      /@nestjs\/core resolved to \S*\/compat\/nest11\/node_modules\//.test(output);
    for (const until = Date.now() + 2_000; !loaded() && Date.now() < until;) await sleep(20);
    if (!loaded()) {
      child.kill('SIGKILL');
      throw new Error(`DEMO_STACK=nest11, but the demo did not load NestJS 11 from compat/nest11:\n${output}`);
    }
  }
  return {
    url: listening[1],
    port: Number(listening[2]),
    child,
    output: () => output,
    async stop() {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
      return child.exitCode;
    },
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

module.exports = { startDemoProcess };
