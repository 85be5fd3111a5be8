// `node bench/previous-ab.mjs`: an interleaved A/B of this build's module server and the previous
// build's (BENCH_PREVIOUS_DIST: a `dist` folder built from an earlier commit), alone on one
// PostgreSQL, at concurrency 32: the execute path (a fresh key per request) and the replay path
// (one key, replayed), AB_ROUNDS rounds (default 9) of BENCH_DURATION seconds (default 5) each,
// alternating which build goes first, each after BENCH_WARMUP seconds (default 2) of the same path
// on the same server. Prints each round's req/s and the median ratio per path.
// BENCH_NODE as for `npm run bench`.
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { startDatabase } from './database.mjs';
import { nodeBinary } from '../scripts/node-lines.mjs';
import { medianAndRange, nodeLine, ratioOfRound } from './interleaved.mjs';
import { killAll, start } from './processes.mjs';

if (!process.env.BENCH_PREVIOUS_DIST) throw new Error('set BENCH_PREVIOUS_DIST to the previous build’s dist folder');
const rounds = Number(process.env.AB_ROUNDS || 9);
const seconds = Number(process.env.BENCH_DURATION || 5);
const warmupSeconds = Number(process.env.BENCH_WARMUP || 2);
const database = await startDatabase();
try {
  const execPath = nodeBinary(process.env.BENCH_NODE || process.execPath);
  const env = { DATABASE_URL: database.url };
  const [current, previous, load] = await Promise.all([
    start('servers/module.mjs', { name: 'this build', env, execPath }),
    start('servers/module.mjs', {
      name: 'previous build',
      env: { ...env, MODULE_DIST: resolve(process.env.BENCH_PREVIOUS_DIST) },
      execPath,
    }),
    start('load.mjs', { name: 'load driver' }),
  ]);
  const url = (server) => `http://127.0.0.1:${server.ready.port}`;
  const replayKeys = new Map();
  for (const server of [current, previous]) {
    const replay = { token: `ab-replay-${randomUUID()}`, key: randomUUID() };
    const prime = await load.call('prime', { url: url(server), ...replay });
    if (prime.status !== 201 || prime.replayed) throw new Error(`priming the replay key answered ${prime.status}`);
    replayKeys.set(server, replay);
  }
  const paths = {
    execute: (server, round, duration = seconds) =>
      load.call('run', { url: url(server), connections: 32, seconds: duration, mode: 'fresh', token: `ab-${round}` }),
    replay: (server, _round, duration = seconds) =>
      load.call('run', {
        url: url(server),
        connections: 32,
        seconds: duration,
        mode: 'fixed',
        ...replayKeys.get(server),
      }),
  };
  for (const server of [current, previous]) for (const path of Object.values(paths)) await path(server, 'warmup');
  const ratios = { execute: [], replay: [] };
  // The paths alternate within each round, so that both see the same stretch of the machine.
  for (let round = 1; round <= rounds; round++) {
    for (const [name, path] of Object.entries(paths)) {
      const ratio = await ratioOfRound({
        round,
        reference: previous,
        tried: current,
        names: ['previous', 'this build'],
        warmUp: (server) => path(server, 'warmup', warmupSeconds),
        measure: async (server) => (await path(server, round)).rps,
        label: name,
      });
      ratios[name].push(ratio);
    }
  }
  for (const [name, values] of Object.entries(ratios))
    console.log(`this build / previous, ${name} path, c=32: ${medianAndRange(values)}, ${nodeLine()}`);
  await Promise.all([current, previous, load].map((child) => child.kill()));
} finally {
  killAll();
  await database.stop();
}
