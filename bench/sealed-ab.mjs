// `node bench/sealed-ab.mjs`: an interleaved A/B of two module servers alone on one PostgreSQL, the
// demo in clear and the demo with keys digested and outcomes sealed, execute path at concurrency
// 32, AB_ROUNDS rounds (default 6) of BENCH_DURATION seconds (default 5), alternating which goes
// first, each after BENCH_WARMUP seconds (default 2) of the same path on the same server. Prints
// each round's req/s and the median ratio. BENCH_NODE as for `npm run bench`.
import { randomBytes } from 'node:crypto';
import { startDatabase } from './database.mjs';
import { nodeBinary } from '../scripts/node-lines.mjs';
import { medianAndRange, nodeLine, ratioOfRound } from './interleaved.mjs';
import { killAll, start } from './processes.mjs';

const rounds = Number(process.env.AB_ROUNDS || 6);
const seconds = Number(process.env.BENCH_DURATION || 5);
const warmupSeconds = Number(process.env.BENCH_WARMUP || 2);
const database = await startDatabase();
try {
  const execPath = nodeBinary(process.env.BENCH_NODE || process.execPath);
  const env = { DATABASE_URL: database.url };
  const sealed = {
    IDEMPOTENCY_KEY_STORAGE: 'digest',
    IDEMPOTENCY_ENCRYPTION_KEYS: `ab:${randomBytes(32).toString('base64')}`,
  };
  const [clear, protectedServer, load] = await Promise.all([
    start('servers/module.mjs', { name: 'clear', env, execPath }),
    start('servers/module.mjs', { name: 'sealed', env: { ...env, ...sealed }, execPath }),
    start('load.mjs', { name: 'load driver' }),
  ]);
  const url = (server) => `http://127.0.0.1:${server.ready.port}`;
  const run = async (server, token, duration = seconds) =>
    (await load.call('run', { url: url(server), connections: 32, seconds: duration, mode: 'fresh', token })).rps;
  for (const server of [clear, protectedServer]) await run(server, 'ab-warmup');
  const ratios = [];
  for (let round = 1; round <= rounds; round++) {
    ratios.push(
      await ratioOfRound({
        round,
        reference: clear,
        tried: protectedServer,
        names: ['clear', 'sealed'],
        warmUp: (server) => run(server, 'ab-warmup', warmupSeconds),
        measure: (server) => run(server, `ab-${round}`),
      }),
    );
  }
  console.log(`sealed / clear, execute path, c=32: ${medianAndRange(ratios)}, ${nodeLine()}`);
  await Promise.all([clear, protectedServer, load].map((child) => child.kill()));
} finally {
  killAll();
  await database.stop();
}
