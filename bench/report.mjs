// Prints what the bench measured as Markdown (it pastes into BENCHMARKS.md as it is): the
// machine, the results table, the ratios against the targets of issue 5, the storm and sweeper
// details, the SQL statements per request, and the correctness checks. Returns whether a
// correctness check failed.
import { execFileSync } from 'node:child_process';
import { availableParallelism, cpus, totalmem } from 'node:os';

const TARGETS = {
  execute: 0.85, // execute-path throughput / baseline throughput, at concurrency 32
  replay: 2, // replay-path throughput / baseline throughput
  storm: 1.5, // steady p99 during the storm / steady p99 without it (at most)
  stormOverControl: 1.3, // steady p99 during the storm / during the control storm (at most): what a duplicate costs beyond receiving it
  clsOverTypeOrm: 0.9, // execute path on @nestjs-cls/transactional / execute path on TypeORM, at concurrency 32
  prismaOverTypeOrm: 1, // the module's ratio to its baseline on Prisma over the same on TypeORM (the cost no larger on Prisma)
  replayCpuOverConstant: 1.5, // server CPU per replay / per answer of the constant-body route (at most)
  executeLatencyAlone: 1.3, // execute-path p50 / baseline p50 at concurrency 1 (at most)
  sealedOverClear: 0.9, // execute path sealed / in clear req/s, concurrency 32
};

export async function machine(database, serverNode = process.execPath) {
  const settings = ['BENCH_NODE', 'BENCH_DURATION', 'BENCH_WARMUP', 'BENCH_ROUNDS', 'BENCH_STORM_LATENCY_MS']
    .filter((name) => process.env[name])
    .map((name) => `${name}=${process.env[name]} `)
    .join('');
  return {
    date: new Date().toISOString(),
    command: `${process.env.DATABASE_URL ? 'DATABASE_URL=… ' : ''}${settings}npm run bench`,
    cpus: `${availableParallelism()} × ${cpus()[0]?.model ?? 'unknown CPU'}`,
    memory: `${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    node:
      serverNode === process.execPath
        ? process.version
        : `${execFileSync(serverNode, ['--version'], { encoding: 'utf8' }).trim()} (servers), ${process.version} (drivers)`,
    postgres: `${database.version}, ${database.kind}`,
  };
}

/**
 * One row from the rounds of a scenario: the median round's req/s, p50 and p99 (with the
 * req/s range), and totals for round trips, CPU and responses.
 */
export function summarize(runs) {
  const total = (f) => runs.reduce((n, r) => n + (f(r) ?? 0), 0);
  const serverResponses = total((r) => r.server.responses);
  const cpu = (name) => (runs.every((r) => r.cpu) ? (total((r) => r.cpu[name]) * 1000) / serverResponses : null);
  return {
    connections: runs[0].connections,
    rounds: runs.length,
    rps: median(runs.map((r) => r.rps)),
    rpsMin: Math.min(...runs.map((r) => r.rps)),
    rpsMax: Math.max(...runs.map((r) => r.rps)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    responses: total((r) => r.responses),
    non2xx: total((r) => r.non2xx),
    server5xx: total((r) => r.server5xx + r.warmup.server5xx),
    dropped: total((r) => r.errors + r.timeouts + r.warmup.errors + r.warmup.timeouts),
    roundTrips: serverResponses ? total((r) => r.server.queries) / serverResponses : null,
    serverCpuMs: cpu('server'),
    postgresCpuMs: runs.every((r) => r.cpu && 'postgres' in r.cpu) ? cpu('postgres') : null,
    othersCores: runs.every((r) => r.cpu) ? runs.map((r) => r.cpu.others / r.cpu.wallSeconds) : [],
    // per statement: how many per response, and the mean time from the query call to its result
    statements: Object.fromEntries(
      [...new Set(runs.flatMap((r) => Object.keys(r.server.byStatement)))].map((s) => {
        const count = total((r) => r.server.byStatement[s]?.count);
        return [s, { perResponse: count / serverResponses, meanMs: total((r) => r.server.byStatement[s]?.ms) / count }];
      }),
    ),
  };
}

/** `run` with its server's CPU per response it finished (ms), when measured. */
function withCpuPerResponse(run) {
  return {
    ...run,
    cpuPerResponse: run.cpu && run.server.responses ? (run.cpu.server * 1000) / run.server.responses : 0,
  };
}

export function printReport(results, host) {
  const { settings } = results;
  const out = [];
  const line = (text = '') => out.push(text);
  const table = (head, rows) => {
    line(`| ${head.join(' | ')} |`);
    line(`|${head.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`);
    for (const row of rows) line(`| ${row.join(' | ')} |`);
    line();
  };

  const byConcurrency = (runs, c) => summarize(runs.filter((r) => r.connections === c));
  const t = {};
  const scenarios = ['baseline', 'keyInsert', 'keyReservation', 'execute', 'replay', 'constant'];
  for (const scenario of scenarios) {
    for (const c of [1, 32]) t[`${scenario}${c}`] = byConcurrency(results.throughput[scenario], c);
  }
  const hostScenarios = [
    'executeCls',
    'drizzleBaseline',
    'executeDrizzle',
    'prismaBaseline',
    'executePrisma',
    'replayPrisma',
    'executeSealed',
    'replayUncached',
    'replaySealedUncached',
    'executePrevious',
    'replayPrevious',
    'executeOutboxWrites',
    'executeOutboxStages',
  ].filter((name) => results.throughput[name]?.length);
  for (const scenario of hostScenarios) t[`${scenario}32`] = summarize(results.throughput[scenario]);
  const storm = Object.fromEntries(Object.entries(results.storm).map(([name, runs]) => [name, summarize(runs)]));
  const sweeper = { alone: summarize(results.sweeper.alone), during: summarize([results.sweeper.during]) };
  const all = [...Object.values(t), ...Object.values(storm), sweeper.alone, sweeper.during];
  const others = all.flatMap((s) => s.othersCores);

  line('## Machine and run');
  line();
  line(`- date: ${host.date}`);
  line(`- command: \`${host.command}\``);
  line(`- CPU: ${host.cpus}; memory: ${host.memory}`);
  line(`- Node.js ${host.node}; PostgreSQL ${host.postgres}`);
  line(
    `- first, every server ran each of its paths for ${settings.jitWarmupSeconds} s (not measured), so that V8 had optimised them\n` +
      `- every measurement: ${settings.warmupSeconds} s warm-up, then ${settings.seconds} s measured (the sweep: until it ` +
      `finishes); each scenario but the sweep ran in ${settings.rounds} rounds, interleaved (rows show the median round, ` +
      `req/s with its range)`,
  );
  if (others.length) {
    line(
      `- the servers, the drivers and PostgreSQL share the machine; other processes used ${fixed(median(others), 2)} cores ` +
        `(median; max ${fixed(Math.max(...others), 2)}) during the measurements`,
    );
  }
  line();

  line('## Results');
  line();
  const rows = [];
  const add = (label, s) => {
    rows.push([
      label,
      s.connections,
      s.rounds > 1 ? `${fixed(s.rps, 0)} (${fixed(s.rpsMin, 0)}–${fixed(s.rpsMax, 0)})` : fixed(s.rps, 0),
      ms(s.p50),
      ms(s.p99),
      fixed(s.roundTrips, 2),
      fixed(s.serverCpuMs, 2),
      fixed(s.postgresCpuMs, 2),
      `${s.responses}${s.non2xx ? ` (${s.non2xx} non-2xx)` : ''}`,
      fixed(median(s.othersCores), 2),
    ]);
  };
  const named = {
    baseline: 'baseline: plain transaction',
    keyInsert: "baseline + the key row's INSERT only, no module",
    keyReservation: "baseline + the key's statements, no module",
    execute: 'execute path: fresh key',
    replay: 'replay path: one key',
    constant: 'constant-body route: the same Nest stack, no module, no statement',
    executeCls: 'execute path on @nestjs-cls/transactional (DEMO_TX=cls)',
    drizzleBaseline: 'Drizzle baseline: plain db.transaction()',
    executeDrizzle: 'execute path on Drizzle (pool, no TypeORM)',
    prismaBaseline: 'Prisma baseline: plain interactive $transaction()',
    executePrisma: 'execute path on Prisma (IdempotentPrisma, pool, no TypeORM)',
    replayPrisma: 'replay path on Prisma: one key',
    executeSealed: 'execute path, keys digested and outcomes sealed (AES-256-GCM)',
    replayUncached: 'replay path, no replay cache (each replay read from the table)',
    replaySealedUncached: 'replay path, sealed, no replay cache (each replay read and opened)',
    executePrevious: 'execute path, the previous build (BENCH_PREVIOUS_DIST)',
    replayPrevious: 'replay path, the previous build',
    executeOutboxWrites: 'execute path on Drizzle, outbox on, the handler only writes',
    executeOutboxStages: 'execute path on Drizzle, outbox on, the handler also stages one message (RabbitMQ)',
  };
  for (const c of [1, 32]) for (const scenario of scenarios) add(named[scenario], t[`${scenario}${c}`]);
  for (const scenario of hostScenarios) add(named[scenario], t[`${scenario}32`]);
  for (const [pair, runs] of Object.entries(results.throughput.besideClear ?? {}))
    if (runs.length)
      add(`execute path in clear (the pairs' reference server), beside the ${pair} one`, summarize(runs));
  const latency = `, handler +${settings.stormLatencyMs} ms`;
  add(`steady fresh keys, no storm${latency}`, storm.alone);
  add(`steady fresh keys, during duplicate storm${latency}`, storm.during);
  add(`steady fresh keys, during unauthenticated storm (control)${latency}`, storm.control);
  add('live inserts (execute path), no sweep', sweeper.alone);
  add('live inserts (execute path), during the sweep', sweeper.during);
  table(
    [
      'scenario',
      'conn.',
      'req/s',
      'p50 ms',
      'p99 ms',
      'SQL round trips/req',
      'server CPU ms/req',
      'PostgreSQL CPU ms/req',
      'responses',
      'other load, cores',
    ],
    rows,
  );
  line(
    'req/s: responses per second seen by autocannon; p50/p99: of its 2xx responses. SQL round trips: every ' +
      '`pg` `Client.query` call in the server process (node-pg sends one statement per round trip) over the ' +
      'HTTP responses that server finished in the same window. CPU: user + system time of the server process, and of ' +
      "the PostgreSQL postmaster with all its children, over the same responses. In the storm rows the storm's " +
      "requests are counted too; in the sweep row, the sweeper's statements and CPU are. Other load: CPU used by " +
      'processes outside the bench (and the kernel) during the measurement, the noise it suffered. "Baseline + the ' +
      "key's statements\": the baseline's handler sending, in its own transaction and round trips, the statements " +
      "transactional mode sends for a fresh key (the key's lock and row lookup, the key row's INSERT), with no " +
      'module code: the ceiling of this design. "Baseline + the key row\'s INSERT only": the same with the INSERT ' +
      "alone (no lock, no lookup: not a correct design, the ceiling of any that records the key in the handler's " +
      'transaction).',
  );
  line();

  // Each ratio is taken within a round (the two runs it compares were measured back to back),
  // then the median over the rounds is judged; the range shows how much the rounds disagreed.
  const perRound = (numerators, denominators, field) =>
    numerators
      .map((run, i) => (run[field] && denominators[i]?.[field] ? run[field] / denominators[i][field] : NaN))
      .filter((x) => !Number.isNaN(x));
  const atConcurrency = (scenario, c) => results.throughput[scenario].filter((r) => r.connections === c);
  /** The execute path in clear measured next to `pair`'s (a report of an older run: the round's own). */
  const besideRuns = (pair) => results.throughput.besideClear?.[pair] ?? [];
  const clearBeside = (pair) => (besideRuns(pair).length ? besideRuns(pair) : atConcurrency('execute', 32));
  const beside = (pair) => (besideRuns(pair).length ? ' (measured beside it)' : '');
  const verdict = (value, target, atMost = false) =>
    value === null ? 'n/a' : (atMost ? value <= target : value >= target) ? 'PASS' : 'FAIL';
  const ratios = [];
  const addRatio = (label, values, target, atMost = false) => {
    const value = median(values);
    const spread = values.length > 1 ? ` (${fixed(Math.min(...values), 2)}–${fixed(Math.max(...values), 2)})` : '';
    ratios.push([
      label,
      `${fixed(value, 2)}×${spread}`,
      target === null ? '—' : `${atMost ? '≤' : '≥'} ${target}×`,
      target === null ? 'info' : verdict(value, target, atMost),
    ]);
  };
  for (const c of [1, 32]) {
    addRatio(
      `execute path / baseline req/s, concurrency ${c}`,
      perRound(atConcurrency('execute', c), atConcurrency('baseline', c), 'rps'),
      c === 32 ? TARGETS.execute : null,
    );
  }
  for (const c of [1, 32]) {
    addRatio(
      `replay path / baseline req/s, concurrency ${c}`,
      perRound(atConcurrency('replay', c), atConcurrency('baseline', c), 'rps'),
      TARGETS.replay,
    );
  }
  addRatio(
    'execute path / baseline p50 latency, concurrency 1',
    perRound(atConcurrency('execute', 1), atConcurrency('baseline', 1), 'p50'),
    TARGETS.executeLatencyAlone,
    true,
  );
  if (results.throughput.constant?.length) {
    for (const c of [1, 32]) {
      addRatio(
        `replay path / constant-body route server CPU per response, concurrency ${c}`,
        perRound(
          atConcurrency('replay', c).map(withCpuPerResponse),
          atConcurrency('constant', c).map(withCpuPerResponse),
          'cpuPerResponse',
        ),
        TARGETS.replayCpuOverConstant,
        true,
      );
    }
  }
  addRatio(
    "baseline + the key row's INSERT only (no module) / baseline req/s, concurrency 32",
    perRound(atConcurrency('keyInsert', 32), atConcurrency('baseline', 32), 'rps'),
    null,
  );
  addRatio(
    "baseline + the key's statements (no module) / baseline req/s, concurrency 32",
    perRound(atConcurrency('keyReservation', 32), atConcurrency('baseline', 32), 'rps'),
    null,
  );
  addRatio(
    "execute path / baseline + the key's statements req/s, concurrency 32",
    perRound(atConcurrency('execute', 32), atConcurrency('keyReservation', 32), 'rps'),
    null,
  );
  if (hostScenarios.length) {
    addRatio(
      `execute path on @nestjs-cls/transactional / execute path on TypeORM${beside('cls')} req/s, concurrency 32`,
      perRound(atConcurrency('executeCls', 32), clearBeside('cls'), 'rps'),
      TARGETS.clsOverTypeOrm,
    );
    addRatio(
      'execute path on Drizzle / Drizzle baseline req/s, concurrency 32',
      perRound(atConcurrency('executeDrizzle', 32), atConcurrency('drizzleBaseline', 32), 'rps'),
      null,
    );
    if (results.throughput.executeOutboxStages?.length) {
      addRatio(
        'handler that stages one message / the same handler that only writes (outbox on) req/s, concurrency 32',
        perRound(atConcurrency('executeOutboxStages', 32), atConcurrency('executeOutboxWrites', 32), 'rps'),
        null,
      );
    }
    if (results.throughput.executePrisma?.length) {
      const prismaExecute = perRound(atConcurrency('executePrisma', 32), atConcurrency('prismaBaseline', 32), 'rps');
      const typeOrmExecute = perRound(atConcurrency('execute', 32), atConcurrency('baseline', 32), 'rps');
      addRatio('execute path on Prisma / Prisma baseline req/s, concurrency 32', prismaExecute, null);
      addRatio(
        'replay path on Prisma / Prisma baseline req/s, concurrency 32',
        perRound(atConcurrency('replayPrisma', 32), atConcurrency('prismaBaseline', 32), 'rps'),
        null,
      );
      // The module's cost on Prisma against its cost on TypeORM, each as a ratio to its own baseline.
      addRatio(
        '(execute / baseline on Prisma) / (execute / baseline on TypeORM), concurrency 32',
        prismaExecute.map((value, i) => value / typeOrmExecute[i]).filter((value) => Number.isFinite(value)),
        TARGETS.prismaOverTypeOrm,
      );
    }
    if (results.throughput.executeSealed?.length) {
      addRatio(
        `execute path, sealed / execute path in clear${beside('sealed')} req/s, concurrency 32`,
        perRound(atConcurrency('executeSealed', 32), clearBeside('sealed'), 'rps'),
        TARGETS.sealedOverClear,
      );
      addRatio(
        'replay path from the table, sealed / in clear req/s, concurrency 1',
        perRound(results.throughput.replaySealedUncached, results.throughput.replayUncached, 'rps'),
        null,
      );
    }
    if (results.throughput.executePrevious?.length) {
      addRatio(
        `execute path, this build${beside('previous')} / the previous build req/s, concurrency 32`,
        perRound(clearBeside('previous'), results.throughput.executePrevious, 'rps'),
        null,
      );
      addRatio(
        'replay path, this build / the previous build req/s, concurrency 32',
        perRound(atConcurrency('replay', 32), results.throughput.replayPrevious, 'rps'),
        null,
      );
    }
  }
  addRatio(
    '**storm headline**: steady p99 during the duplicate storm / during the control storm',
    perRound(results.storm.during, results.storm.control, 'p99'),
    TARGETS.stormOverControl,
    true,
  );
  addRatio(
    'steady p99 during duplicate storm / without',
    perRound(results.storm.during, results.storm.alone, 'p99'),
    TARGETS.storm,
    true,
  );
  addRatio(
    'steady p99 during unauthenticated storm (control) / without',
    perRound(results.storm.control, results.storm.alone, 'p99'),
    null,
  );
  addRatio(
    'live-insert p99 during sweep / without (median round)',
    sweeper.during.p99 && sweeper.alone.p99 ? [sweeper.during.p99 / sweeper.alone.p99] : [],
    null,
  );
  if (results.jobs) {
    const { plain, module } = results.jobs;
    const jobsRow = (label, runs) => {
      const rates = runs.map((r) => r.jobsPerSecond);
      return [label, `${fixed(median(rates), 0)} (${fixed(Math.min(...rates), 0)}–${fixed(Math.max(...rates), 0)})`];
    };
    line('## BullMQ jobs (Redis, @nestjs/bullmq, concurrency 16)');
    line();
    table(
      ['processor', `jobs/s, a backlog of ${plain[0].backlog}`],
      [
        jobsRow('plain: its own transaction', plain),
        jobsRow('@IdempotentJob(): the key in the same transaction', module),
      ],
    );
    addRatio(
      '@IdempotentJob() processor / plain processor jobs/s (backlog)',
      module.map((run, i) => run.jobsPerSecond / plain[i].jobsPerSecond),
      null,
    );
  }
  if (results.consumers) {
    const { plain, module, ceiling, previous } = results.consumers;
    const consumerRow = (label, runs) => [
      label,
      `${fixed(median(runs.map((r) => r.messagesPerSecond)), 0)} (${fixed(Math.min(...runs.map((r) => r.messagesPerSecond)), 0)}–${fixed(Math.max(...runs.map((r) => r.messagesPerSecond)), 0)})`,
      ms(median(runs.map((r) => r.p50))),
      ms(median(runs.map((r) => r.p99))),
    ];
    line('## Message consumers (RabbitMQ, Nest RMQ transport)');
    line();
    table(
      [
        'consumer',
        `messages/s, a backlog of ${plain[0].backlog}`,
        `p50 ms publish → commit, ${plain[0].rate}/s`,
        `p99 ms publish → commit, ${plain[0].rate}/s`,
      ],
      [
        consumerRow('plain: its own transaction, acked after the commit', plain),
        consumerRow('@IdempotentMessage(): the key in the same transaction', module),
        ...(ceiling
          ? [consumerRow("plain + the key's statements, no module code: the ceiling of this design", ceiling)]
          : []),
        ...(previous ? [consumerRow('@IdempotentMessage(), the previous build (BENCH_PREVIOUS_DIST)', previous)] : []),
      ],
    );
    if (previous) {
      addRatio(
        '@IdempotentMessage() consumer, this build / the previous build messages/s (backlog)',
        module.map((run, i) => run.messagesPerSecond / previous[i].messagesPerSecond),
        null,
      );
    }
    addRatio(
      '@IdempotentMessage() consumer / plain consumer messages/s (backlog)',
      module.map((run, i) => run.messagesPerSecond / plain[i].messagesPerSecond),
      null,
    );
    if (ceiling) {
      addRatio(
        "plain consumer + the key's statements / plain consumer messages/s (backlog): the design's ceiling",
        ceiling.map((run, i) => run.messagesPerSecond / plain[i].messagesPerSecond),
        null,
      );
      addRatio(
        "@IdempotentMessage() consumer / plain consumer + the key's statements messages/s (backlog)",
        module.map((run, i) => run.messagesPerSecond / ceiling[i].messagesPerSecond),
        null,
      );
    }
    addRatio(
      '@IdempotentMessage() consumer / plain consumer p99 publish → commit (paced)',
      module.map((run, i) => run.p99 / plain[i].p99),
      null,
    );
  }
  line('## Ratios (same run: each taken within a round, median over the rounds, range in brackets)');
  line();
  table(['ratio', 'measured', 'target', 'result'], ratios);

  const waves = results.storm.during.flatMap((r) => r.side);
  const controlWaves = results.storm.control.flatMap((r) => r.side);
  const sum = (list, f) => list.reduce((n, x) => n + f(x), 0);
  const statusCount = (list, test) =>
    sum(list, (w) => sum(Object.entries(w.statuses), ([s, n]) => (test(Number(s)) ? n : 0)));
  const executedByClient = sum(waves, (w) => (w.statuses[201] ?? 0) - w.replayed);
  const executions = waves.map((w) => w.executions);
  const storm5xx = statusCount(waves, (s) => s >= 500);
  const stormDropped = sum(waves, (w) => w.errors);
  line('## Duplicate storm');
  line();
  line(
    `Each wave: ${settings.stormSize} concurrent requests with one fresh key (and its own caller), sent at once; waves ` +
      `repeat back to back for the whole measured window, beside ${settings.steadyConnections} connections of steady ` +
      `fresh-key traffic. The handler sleeps ${settings.stormLatencyMs} ms inside the key's transaction, so each wave ` +
      `overlaps its key's first execution (409 while it runs, replays after it commits).`,
  );
  line();
  table(
    ['', 'value'],
    [
      [
        'waves (storm keys) / storm requests',
        `${waves.length} / ${sum(waves, (w) => sum(Object.values(w.statuses), (n) => n) + w.errors)}`,
      ],
      ['executions per storm key (payments rows; must be 1)', range(executions)],
      [
        '201 executed / 201 replayed / 409 key-in-use',
        `${executedByClient} / ${sum(waves, (w) => w.replayed)} / ${statusCount(waves, (s) => s === 409)}`,
      ],
      ['other statuses', JSON.stringify(otherStatuses(waves))],
      ['5xx, storm and steady (must be 0)', storm5xx + storm.during.server5xx],
      ['dropped requests (socket errors, timeouts)', stormDropped + storm.during.dropped],
      ['wave duration, ms (min–max)', range(waves.map((w) => Math.round(w.ms)))],
      [
        'control storm: waves, wave duration ms (min–max)',
        `${controlWaves.length}, ${range(controlWaves.map((w) => Math.round(w.ms)))}`,
      ],
    ],
  );

  if (results.outboxLag?.length) {
    line('## Outbox: commit to publish');
    line();
    line(
      "The outbox pair's staging server, concurrency 32: each request stages one message, its relay (in the same " +
        'process, nudged at each commit) publishes it to RabbitMQ through a confirm channel. Per round, over the ' +
        "measured window: from the commit (the row's `created_at`, the time of the staging statement sent with the " +
        "COMMIT) to the broker's confirm.",
    );
    line();
    table(
      ['round', 'messages relayed', 'p50 ms', 'p99 ms'],
      results.outboxLag.map((lag, index) => [index + 1, lag.count, ms(lag.p50), ms(lag.p99)]),
    );
  }

  const sweep = results.sweeper.during.side;
  line('## Sweeper');
  line();
  table(
    ['', 'value'],
    [
      [
        `insert ${settings.expiredRows.toLocaleString('en')} expired rows (one INSERT … SELECT generate_series, then ANALYZE)`,
        `${fixed(results.sweeper.insertMs / 1000, 1)} s`,
      ],
      ['sweep() time', `${fixed(sweep.ms / 1000, 1)} s`],
      ['rows deleted', sweep.deleted.toLocaleString('en')],
      ['delete rate', `${Math.round(sweep.deleted / (sweep.ms / 1000)).toLocaleString('en')} rows/s`],
      ['DELETE batches', results.sweeper.during.server.byStatement['DELETE idempotency_keys']?.count ?? 0],
      ['expired rows left', results.sweeper.left],
      [
        `live-insert p99 without / during the sweep (${settings.steadyConnections} connections)`,
        `${ms(sweeper.alone.p99)} / ${ms(sweeper.during.p99)} ms`,
      ],
    ],
  );

  line('## SQL statements per request');
  line();
  const statementRows = [];
  for (const scenario of scenarios) {
    const [c1, c32] = [t[`${scenario}1`], t[`${scenario}32`]];
    for (const [statement, { perResponse }] of Object.entries(c32.statements)) {
      if (perResponse < 0.005) continue;
      statementRows.push([
        named[scenario],
        statement,
        fixed(perResponse, 2),
        ms(c1.statements[statement]?.meanMs),
        ms(c32.statements[statement]?.meanMs),
      ]);
    }
  }
  table(['path', 'statement', 'per request', 'mean ms, conc. 1', 'mean ms, conc. 32'], statementRows);
  line(
    "Mean ms: from the `query` call to its result in the server process: the round trip and PostgreSQL's work (at " +
      'concurrency 32 also the wait for the CPU, which the server, the drivers and PostgreSQL share).',
  );
  line();

  const checks = [
    ['every storm key executed exactly once', executions.length > 0 && executions.every((n) => n === 1)],
    ['the clients saw exactly one executed (not replayed) 201 per storm key', executedByClient === waves.length],
    ['no 5xx in any scenario (warm-ups included)', storm5xx === 0 && all.every((s) => s.server5xx === 0)],
    ['no dropped requests (socket errors, timeouts)', stormDropped === 0 && all.every((s) => s.dropped === 0)],
    ['each replay key executed once (its priming request)', results.replayExecutions.every((n) => n === 1)],
    ['the sweep deleted every expired row', results.sweeper.left === 0],
  ];
  line('## Correctness checks');
  line();
  for (const [check, ok] of checks) line(`- ${ok ? 'ok' : 'FAILED'}: ${check}`);
  line();

  process.stdout.write(out.join('\n'));
  return checks.some(([, ok]) => !ok);
}

function otherStatuses(waves) {
  const other = {};
  for (const wave of waves) {
    for (const [status, n] of Object.entries(wave.statuses)) {
      if (status !== '201' && status !== '409') other[status] = (other[status] ?? 0) + n;
    }
  }
  return other;
}

function median(values) {
  const sorted = values.filter((v) => v !== null && v !== undefined).sort((a, b) => a - b);
  if (!sorted.length) return null;
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function range(values) {
  if (!values.length) return '—';
  const min = Math.min(...values);
  const max = Math.max(...values);
  return min === max ? String(min) : `${min}–${max}`;
}

function fixed(value, digits) {
  return value === null || value === undefined || Number.isNaN(value) ? '—' : value.toFixed(digits);
}

function ms(value) {
  return value === null || value === undefined ? '—' : value < 10 ? value.toFixed(2) : value.toFixed(1);
}
