// `npm run bench:instructions`: the CPU instructions each server spends per request, counted by
// valgrind's callgrind. Throughput on a shared machine moves by ±10 % between rounds; an
// instruction count does not depend on what else the machine runs (the same binary, code and
// requests give the same count within a few per cent), so small changes to the module's own work
// can be compared here. Each server runs under callgrind with counting switched off, serves a
// warm-up (so that V8 has optimised its code), then counts while it serves a fixed number of
// requests. Everything the server process executes is counted: its main thread and V8's helper
// threads (garbage collection, compilers), not the kernel. PostgreSQL as `npm run bench` chooses
// it; BENCH_NODE=<line or path> runs the servers on another Node.js (`26`: scripts/node-lines.mjs
// installs that line). BENCH_PREVIOUS_DIST (a `dist` folder of an earlier commit) adds that build's
// execute and replay paths; BENCH_INSTRUCTIONS_ONLY (a regular expression) counts only the scenarios it matches
// (the first one counted is the one the others are divided by).
import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { startDatabase } from './database.mjs';
import { nodeBinary } from '../scripts/node-lines.mjs';
import { killAll, start } from './processes.mjs';

const settings = {
  warmup: positive('BENCH_INSTRUCTIONS_WARMUP', 4000),
  requests: positive('BENCH_INSTRUCTIONS_REQUESTS', 2000),
  connections: 8,
  node: nodeBinary(process.env.BENCH_NODE || process.execPath),
};
const run = Date.now().toString(36);
const log = (message) => process.stderr.write(`bench: ${message}\n`);

/** The servers counted, two at a time (the counts do not depend on the machine's load). */
const scenarios = [
  { name: 'baseline', script: 'servers/baseline.mjs', mode: 'none' },
  {
    name: "baseline + the key's statements",
    script: 'servers/key-statements.mjs',
    env: { KEY_STATEMENTS: 'reservation' },
    mode: 'none',
  },
  { name: 'execute path (fresh key per request)', script: 'servers/module.mjs', mode: 'fresh' },
  { name: 'replay path (one key)', script: 'servers/module.mjs', mode: 'fixed' },
  { name: 'constant-body route (the same Nest stack, no statement)', script: 'servers/constant.mjs', mode: 'none' },
  {
    name: 'constant-body route behind a pass-through interceptor',
    script: 'servers/constant.mjs',
    env: { CONSTANT_INTERCEPTOR: 'pass' },
    mode: 'none',
  },
  ...(process.env.BENCH_PREVIOUS_DIST
    ? [
        {
          name: 'execute path, the previous build',
          script: 'servers/module.mjs',
          env: { MODULE_DIST: process.env.BENCH_PREVIOUS_DIST },
          mode: 'fresh',
        },
        {
          name: 'replay path, the previous build',
          script: 'servers/module.mjs',
          env: { MODULE_DIST: process.env.BENCH_PREVIOUS_DIST },
          mode: 'fixed',
        },
      ]
    : []),
].filter(
  (scenario) =>
    !process.env.BENCH_INSTRUCTIONS_ONLY || new RegExp(process.env.BENCH_INSTRUCTIONS_ONLY).test(scenario.name),
);

try {
  execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
} catch {
  log('valgrind is not installed (Debian: apt-get install valgrind); nothing was measured');
  process.exit(2);
}

let database;
const workDir = mkdtempSync(join(tmpdir(), 'bench-instructions-'));
const keepAlive = setInterval(() => undefined, 60_000);
let status = 2;
try {
  database = await startDatabase();
  log(
    `PostgreSQL ${database.version}, ${database.kind}; servers on Node.js ${execFileSync(settings.node, ['--version'], { encoding: 'utf8' }).trim()}`,
  );
  const load = await start('load.mjs', { name: 'load driver' });
  const results = [];
  for (let i = 0; i < scenarios.length; i += 2) {
    results.push(...(await Promise.all(scenarios.slice(i, i + 2).map((scenario) => count(scenario, load)))));
  }
  print(results);
  status = results.every((result) => result.answered === settings.requests) ? 0 : 1;
} catch (error) {
  log(error.stack ?? String(error));
} finally {
  killAll();
  await database?.stop().catch(() => undefined);
  rmSync(workDir, { recursive: true, force: true });
  clearInterval(keepAlive);
}
process.exit(status);

/** One server under callgrind: warm-up uncounted, then `settings.requests` counted. */
async function count(scenario, load) {
  const out = join(workDir, `${scenario.script.replace(/\W/g, '-')}-${scenario.mode}.callgrind`);
  const server = await start(scenario.script, {
    name: scenario.name,
    env: { DATABASE_URL: database.url, ...scenario.env },
    execPath: 'valgrind',
    execArgv: [
      '-q',
      '--tool=callgrind',
      '--instr-atstart=no',
      '--smc-check=all-non-file',
      `--callgrind-out-file=${out}`,
      settings.node,
    ],
    timeoutMs: 600_000,
  });
  const args = {
    url: `http://127.0.0.1:${server.ready.port}`,
    connections: settings.connections,
    mode: scenario.mode,
    token: `bench-${run}-${scenario.mode}`,
    key: randomUUID(),
  };
  log(`${scenario.name}: warming up (${settings.warmup} requests, not counted)`);
  if (scenario.mode === 'fixed') await load.call('prime', args);
  await load.call('run', { ...args, requests: settings.warmup });
  execFileSync('callgrind_control', ['--instr=on', String(server.pid)], { stdio: 'ignore' });
  const measured = await load.call('run', { ...args, requests: settings.requests });
  execFileSync('callgrind_control', ['--instr=off', String(server.pid)], { stdio: 'ignore' });
  await server.kill();
  const totals = /^totals: (\d+)/m.exec(readFileSync(out, 'utf8'));
  if (!totals) throw new Error(`${scenario.name}: callgrind wrote no totals`);
  log(`${scenario.name}: ${(Number(totals[1]) / measured.responses / 1e6).toFixed(3)} M instructions per request`);
  return { scenario, instructions: Number(totals[1]), responses: measured.responses, answered: measured.ok };
}

function print(results) {
  const baseline = results[0].instructions / results[0].responses;
  console.log(`\n| scenario | instructions per request | baseline ÷ scenario | responses (2xx) |`);
  console.log(`|---|---:|---:|---:|`);
  for (const { scenario, instructions, responses, answered } of results) {
    const perRequest = instructions / responses;
    console.log(
      `| ${scenario.name} | ${(perRequest / 1e6).toFixed(3)} M | ${(baseline / perRequest).toFixed(2)}× | ${responses} (${answered}) |`,
    );
  }
  console.log(
    `\n${settings.requests} requests counted per server after ${settings.warmup} uncounted, ${settings.connections} connections; ` +
      'instructions of the whole server process (all its threads), from callgrind. "baseline ÷ scenario" is the throughput ratio a server limited by its own CPU would reach.',
  );
}

function positive(name, fallback) {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer`);
  return value;
}
