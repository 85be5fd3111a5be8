// `npm run bench:like`: the HTTP execute path like for like. Four servers on one PostgreSQL, each
// differing from the one before it by one thing:
// - baseline: the demo's Nest setup without the module (servers/baseline.mjs);
// - ceiling: the same, sending the key's statements as transactional mode sends them, with no
//   module (servers/key-statements.mjs, KEY_STATEMENTS=reservation);
// - module: the baseline's app with `IdempotencyModule.forRoot()` and `@Idempotent()` alone
//   (servers/module-lean.mjs);
// - demo: the demo app (servers/module.mjs), which `npm run bench` calls "the module server".
// At concurrency 1 and 32, LIKE_ROUNDS rounds (default 5) of BENCH_DURATION seconds (default 5),
// the servers' order rotating from round to round, each measurement after BENCH_WARMUP seconds
// (default 2) of its own server. Per server: req/s, the server's CPU per request, p50; the medians
// over the rounds, and the ratios of neighbours. BENCH_NODE as for `npm run bench`.
import { cpuMeter, localPostmaster } from './cpu.mjs';
import { startDatabase } from './database.mjs';
import { nodeBinary } from '../scripts/node-lines.mjs';
import { nodeLine } from './interleaved.mjs';
import { killAll, start } from './processes.mjs';
import { machine } from './report.mjs';

const rounds = Number(process.env.LIKE_ROUNDS || 5);
const seconds = Number(process.env.BENCH_DURATION || 5);
const warmupSeconds = Number(process.env.BENCH_WARMUP || 2);
const jitSeconds = Number(process.env.BENCH_JIT_WARMUP || 10);
const log = (message) => process.stderr.write(`bench:like: ${message}\n`);
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const database = await startDatabase();
let status = 2;
try {
  const execPath = nodeBinary(process.env.BENCH_NODE || process.execPath);
  const env = { DATABASE_URL: database.url };
  const servers = {
    baseline: start('servers/baseline.mjs', { name: 'baseline', env, execPath }),
    ceiling: start('servers/key-statements.mjs', {
      name: 'ceiling',
      env: { ...env, KEY_STATEMENTS: 'reservation' },
      execPath,
    }),
    module: start('servers/module-lean.mjs', { name: 'module (lean)', env, execPath }),
    demo: start('servers/module.mjs', { name: 'demo', env, execPath }),
  };
  for (const [name, starting] of Object.entries(servers)) servers[name] = await starting;
  const load = await start('load.mjs', { name: 'load driver' });
  const postmaster = await localPostmaster(database.sql);
  const url = (server) => `http://127.0.0.1:${server.ready.port}`;
  const names = Object.keys(servers);
  // The baseline and the ceiling take no key; the module's servers a fresh one per request.
  const mode = (name) => (name === 'baseline' || name === 'ceiling' ? 'none' : 'fresh');
  const token = `like-${Date.now().toString(36)}`;
  log(`warming every server up for ${jitSeconds} s (not measured)`);
  for (const name of names)
    await load.call('run', { url: url(servers[name]), connections: 32, seconds: jitSeconds, mode: mode(name), token });
  const measured = Object.fromEntries(names.map((name) => [name, { 1: [], 32: [] }]));
  for (let round = 1; round <= rounds; round++) {
    const order = names.map((_, at) => names[(at + round - 1) % names.length]);
    for (const connections of [1, 32]) {
      for (const name of order) {
        const server = servers[name];
        const args = { url: url(server), connections, mode: mode(name), token };
        await load.call('run', { ...args, seconds: warmupSeconds });
        await database.sql('CHECKPOINT').catch(() => undefined);
        const cpu = cpuMeter({ server: server.pid }, postmaster);
        const before = cpu.take();
        const result = await load.call('run', { ...args, seconds });
        const usage = cpu.since(before);
        if (result.non2xx + result.errors + result.timeouts > 0)
          throw new Error(`${name} answered ${JSON.stringify(result.statuses)}, ${result.errors} errors`);
        const row = {
          rps: result.rps,
          p50: result.p50,
          serverMs: usage ? (usage.server * 1000) / result.responses : null,
          postgresMs: usage ? (usage.postgres * 1000) / result.responses : null,
          others: usage ? usage.others / usage.wallSeconds : null,
        };
        measured[name][connections].push(row);
        log(
          `round ${round}, c=${connections}, ${name}: ${row.rps.toFixed(0)} req/s, server ${row.serverMs?.toFixed(3)} ms/req, p50 ${row.p50} ms`,
        );
      }
    }
  }
  const host = await machine(database, execPath);
  const of = (name, connections, field) => median(measured[name][connections].map((row) => row[field]));
  const fixed = (value, digits = 2) => (value === null || value === undefined ? '–' : value.toFixed(digits));
  const lines = [
    `${host.date}: ${host.cpus}, ${host.memory}; servers on ${nodeLine()}; PostgreSQL ${host.postgres}`,
    `${rounds} rounds of ${seconds} s per server and concurrency, the order rotating; medians over the rounds`,
    '',
    '| server | c=1 req/s | c=1 p50 (ms) | c=1 server CPU (ms/req) | c=32 req/s | c=32 server CPU (ms/req) | c=32 PostgreSQL CPU (ms/req) |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...names.map(
      (name) =>
        `| ${name} | ${fixed(of(name, 1, 'rps'), 0)} | ${fixed(of(name, 1, 'p50'), 1)} | ${fixed(of(name, 1, 'serverMs'), 3)} | ${fixed(of(name, 32, 'rps'), 0)} | ${fixed(of(name, 32, 'serverMs'), 3)} | ${fixed(of(name, 32, 'postgresMs'), 3)} |`,
    ),
    '',
    "| ratio | c=1 req/s | c=1 p50 | c=32 req/s | server CPU over the other's, c=1 / c=32 (ms/req) |",
    '|---|---:|---:|---:|---:|',
    ...[
      ['ceiling / baseline', 'ceiling', 'baseline'],
      ['module / ceiling', 'module', 'ceiling'],
      ['module / baseline', 'module', 'baseline'],
      ['demo / module', 'demo', 'module'],
    ].map(
      ([label, a, b]) =>
        `| ${label} | ${fixed(of(a, 1, 'rps') / of(b, 1, 'rps'))}× | ${fixed(of(a, 1, 'p50') / of(b, 1, 'p50'))}× | ${fixed(of(a, 32, 'rps') / of(b, 32, 'rps'))}× | ${fixed(of(a, 1, 'serverMs') - of(b, 1, 'serverMs'), 3)} / ${fixed(of(a, 32, 'serverMs') - of(b, 32, 'serverMs'), 3)} |`,
    ),
    '',
    `other load on the machine during the measurements (cores, median): ${fixed(median(names.flatMap((name) => [1, 32].flatMap((c) => measured[name][c].map((row) => row.others ?? 0)))))}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  status = 0;
} catch (error) {
  log(error.stack ?? String(error));
} finally {
  killAll();
  await database.stop().catch(() => undefined);
  process.stdout.write('', () => process.exit(status));
}
