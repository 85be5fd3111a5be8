// Proves the README's first command: starts `npm start` with no DATABASE_URL (embedded
// PostgreSQL), pays twice with one key, checks the replay, stops it with SIGTERM and checks
// that it exits and leaves no database files behind.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';

const port = await new Promise((resolve, reject) => {
  const server = createServer();
  server.once('error', reject);
  server.listen(0, '127.0.0.1', () => {
    const { port: free } = server.address();
    server.close(() => resolve(free));
  });
});
const env = { ...process.env, PORT: String(port) };
delete env.DATABASE_URL;
const leftovers = () => readdirSync(tmpdir()).filter((name) => name.startsWith(`nestjs-pg-idempotency-`));
const before = new Set(leftovers());
const demo = spawn('npm', ['start'], { env, stdio: ['ignore', 'pipe', 'inherit'], detached: true });
let output = '';
demo.stdout.on('data', (chunk) => (output += chunk));
const fail = (message) => {
  console.error(`smoke-demo: ${message}\n--- demo output ---\n${output}`);
  try {
    process.kill(-demo.pid, 'SIGKILL');
  } catch {}
  process.exit(1);
};

const deadline = Date.now() + 180_000;
while (!output.includes('listening on')) {
  if (demo.exitCode !== null) fail('npm start exited before listening');
  if (Date.now() > deadline) fail('npm start did not listen within 180 s');
  await sleep(100);
}
// The example is printed by a write of its own, after the listening line: give it a moment.
const exampleDeadline = Date.now() + 5_000;
while (!output.includes('curl')) {
  if (Date.now() > exampleDeadline) fail('no curl example printed');
  await sleep(50);
}

const url = `http://127.0.0.1:${port}/payments`;
const headers = { authorization: 'Bearer smoke', 'content-type': 'application/json', 'idempotency-key': randomUUID() };
const pay = () => fetch(url, { method: 'POST', headers, body: JSON.stringify({ amount: 500, currency: 'EUR' }) });
const first = await pay();
const firstBody = await first.text();
const second = await pay();
const secondBody = await second.text();
if (first.status !== 201 || second.status !== 201) fail(`expected 201 twice, got ${first.status} and ${second.status}`);
if (second.headers.get('idempotent-replayed') !== 'true' || secondBody !== firstBody)
  fail('the retry was not a byte-identical replay');
const list = await (await fetch(url, { headers: { authorization: 'Bearer smoke' } })).json();
if (list.length !== 1) fail(`expected one payment, found ${list.length}`);
const unauthenticated = await fetch(url, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: '{}',
});
if (unauthenticated.status !== 401) fail(`expected 401 without a token, got ${unauthenticated.status}`);

const demoProcess = [...leftovers()].filter((name) => !before.has(name));
process.kill(-demo.pid, 'SIGTERM');
const exitDeadline = Date.now() + 30_000;
const groupAlive = () => {
  try {
    process.kill(-demo.pid, 0);
    return true;
  } catch {
    return false;
  }
};
while (groupAlive()) {
  if (Date.now() > exitDeadline) fail('the demo (or its PostgreSQL) did not exit within 30 s of SIGTERM');
  await sleep(100);
}
const remaining = leftovers().filter((name) => demoProcess.includes(name));
if (remaining.length) fail(`embedded PostgreSQL files left behind: ${remaining.join(', ')}`);
console.log(
  `smoke-demo: npm start on Node.js ${process.version} served POST /payments (201, replayed), GET /payments and 401; exited cleanly`,
);
