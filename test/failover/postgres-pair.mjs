// Two PostgreSQL clusters of the machine's PostgreSQL (Debian's /usr/lib/postgresql/<major>/bin,
// PG_BIN to choose) with streaming replication, for the failover suite (npm run test:failover):
// a primary and a standby, each on a port of its own, in a folder of their own under the OS temp
// dir, run as the `postgres` OS user when this runs as root (PostgreSQL refuses root).
// - synchronous: the standby is `synchronous_standby_names` and `synchronous_commit = on`, so a
//   commit returns only once the standby has flushed it; otherwise replication is asynchronous.
// - kill(node): SIGKILL to the postmaster and every backend (a machine that died);
// - promote(node): the standby becomes the primary (`pg_ctl promote`);
// - rejoin(node, primary): a killed or stopped old primary rewound (`pg_rewind`) and started as
//   a standby of the new one;
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePorts } from './free-ports.mjs';
import { untilSynchronous, untilWritable } from './readiness.mjs';
import { startTcpProxy } from './tcp-proxy.mjs';

const root = process.getuid?.() === 0;

/** The machine's PostgreSQL binaries: PG_BIN, else the newest of /usr/lib/postgresql/<major>/bin. */
export function postgresBin() {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  for (const major of [18, 17, 16, 15, 14]) {
    const bin = `/usr/lib/postgresql/${major}/bin`;
    if (existsSync(join(bin, 'pg_ctl'))) return bin;
  }
  return undefined;
}

function command(bin, tool, args) {
  const path = join(bin, tool);
  return root ? ['runuser', ['-u', 'postgres', '--', path, ...args]] : [path, args];
}

function run(bin, tool, args, options = {}) {
  const result = spawnSync(...command(bin, tool, args), { encoding: 'utf8', ...options });
  if (result.status !== 0 && !options.allowFailure)
    throw new Error(`${tool} ${args.join(' ')} failed (${result.status}): ${result.stderr || result.stdout}`);
  return result;
}

/**
 * `run` without blocking this process: the replication link lives here, and a tool that waits on
 * the standby (a clean stop waits for it to confirm the primary's last WAL) needs the link to
 * forward meanwhile.
 */
function runInBackground(bin, tool, args, { allowFailure = false } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(...command(bin, tool, args), { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (status) => {
      if (status !== 0 && !allowFailure) reject(new Error(`${tool} ${args.join(' ')} failed (${status}): ${output}`));
      else resolve({ status, output });
    });
  });
}

/**
 * Starts a primary on `ports[0]` and a standby of it on `ports[1]` (two free ports by default).
 * Resolves the pair: each node's URL and data folder, and the operations above. `remove()`
 * removes everything; a pair that fails to start is removed, its logs in the error.
 */
export async function startPostgresPair({ synchronous, ports }) {
  ports ??= await freePorts(2);
  const bin = postgresBin();
  if (!bin) throw new Error('no PostgreSQL binaries found (set PG_BIN to the folder of pg_ctl)');
  const folder = mkdtempSync(join(tmpdir(), 'nestjs-pg-idempotency-failover-'));
  if (root)
    chownSync(
      folder,
      Number(execFileSync('id', ['-u', 'postgres']).toString()),
      Number(execFileSync('id', ['-g', 'postgres']).toString()),
    );
  const nodes = ports.map((port, index) => ({
    name: index === 0 ? 'node1' : 'node2',
    port,
    data: join(folder, index === 0 ? 'node1' : 'node2'),
    log: join(folder, `${index === 0 ? 'node1' : 'node2'}.log`),
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
  }));
  const [first, second] = nodes;

  const start = (node) => {
    const args = ['-D', node.data, '-l', node.log, '-o', `-p ${node.port}`, '-w', '-t', '60', 'start'];
    if (run(bin, 'pg_ctl', args, { allowFailure: true }).status !== 0)
      throw new Error(`${node.name} did not start on port ${node.port}`);
  };
  let link;
  try {
    run(bin, 'initdb', ['-D', first.data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C']);
    appendFileSync(join(first.data, 'postgresql.conf'), settings(folder, synchronous));
    start(first);
    const backup = ['-h', '127.0.0.1', '-p', String(first.port), '-U', 'postgres', '-D', second.data, '-X', 'stream'];
    run(bin, 'pg_basebackup', backup);
    // The standby streams from the primary through a link the suite can hold and break.
    link = await startTcpProxy({ target: first.port });
    follow(second, { port: link.port });
    start(second);
    if (synchronous) await untilSynchronous(first.url);
  } catch (error) {
    error.message += `\n${logs()}`;
    for (const node of nodes) run(bin, 'pg_ctl', ['-D', node.data, '-m', 'immediate', 'stop'], { allowFailure: true });
    await link?.close();
    rmSync(folder, { recursive: true, force: true });
    throw error;
  }

  const pair = {
    folder,
    nodes,
    synchronous,
    primary: first,
    standby: second,
    /** SIGKILL to the node's postmaster and its backends. */
    kill(node) {
      const pid = postmasterPid(node);
      if (!pid) return;
      const children = spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
        .stdout.split('\n')
        .filter(Boolean);
      for (const victim of [pid, ...children.map(Number)]) {
        try {
          process.kill(victim, 'SIGKILL');
        } catch {}
      }
    },
    /**
     * Holds the replication link for `ms` (what the primary streams stays in its sockets): what
     * the primary commits meanwhile is not on the standby, as on a standby that lags. The link's
     * `drop()` then loses it.
     */
    async lag(ms) {
      link.hold();
      await sleep(ms);
      return () => link.drop();
    },
    /**
     * Stops the node cleanly (a planned shutdown: the primary streams every commit first, and
     * waits for the standby to confirm it). Rejects when it did not stop, unless `allowFailure`.
     */
    stop(node, { allowFailure = false } = {}) {
      return runInBackground(bin, 'pg_ctl', ['-D', node.data, '-m', 'fast', '-w', 'stop'], { allowFailure });
    },
    async promote(node) {
      await runInBackground(bin, 'pg_ctl', ['-D', node.data, '-w', '-t', '60', 'promote']);
      await untilWritable(node.url);
      pair.primary = node;
      pair.standby = nodes.find((other) => other !== node);
    },
    /** The old primary (killed or stopped) rewound to the new primary's timeline and started as its standby. */
    async rejoin(node) {
      const primary = pair.primary;
      await waitForExit(node);
      // pg_rewind reads the new timeline from the source's control file, which a promotion
      // updates at its next checkpoint: before one, it finds "no rewind required" and the old
      // primary keeps WAL the new timeline does not have.
      run(bin, 'psql', [
        '-h',
        '127.0.0.1',
        '-p',
        String(primary.port),
        '-U',
        'postgres',
        '-d',
        'postgres',
        '-c',
        'CHECKPOINT',
      ]);
      run(bin, 'pg_rewind', [
        '-D',
        node.data,
        `--source-server=host=127.0.0.1 port=${primary.port} user=postgres dbname=postgres`,
      ]);
      follow(node, primary);
      start(node);
      if (pair.synchronous) await untilSynchronous(primary.url);
    },
    async remove() {
      for (const node of nodes) await pair.stop(node, { allowFailure: true });
      await link.close();
      rmSync(folder, { recursive: true, force: true });
    },
    logs,
  };
  return pair;

  /** The tail of each node's server log. */
  function logs() {
    return nodes
      .map((node) => `--- ${node.name}\n${existsSync(node.log) ? readFileSync(node.log, 'utf8').slice(-3000) : ''}`)
      .join('\n');
  }

  /** Makes `node` a standby of `primary` (standby.signal and primary_conninfo, its own application_name). */
  function follow(node, primary) {
    writeFileSync(join(node.data, 'standby.signal'), '');
    appendFileSync(
      join(node.data, 'postgresql.auto.conf'),
      `primary_conninfo = 'host=127.0.0.1 port=${primary.port} user=postgres application_name=${node.name}'\n`,
    );
    if (root) spawnSync('chown', ['-R', 'postgres:postgres', node.data]);
  }

  function postmasterPid(node) {
    const file = join(node.data, 'postmaster.pid');
    if (!existsSync(file)) return undefined;
    const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
    try {
      process.kill(pid, 0);
      return pid;
    } catch {
      return undefined;
    }
  }

  async function waitForExit(node) {
    for (let i = 0; i < 300 && postmasterPid(node); i++) await sleep(100);
  }
}

/** The primary's postgresql.conf settings (the standby copies them). */
function settings(folder, synchronous) {
  return [
    `listen_addresses = '127.0.0.1'`,
    `unix_socket_directories = '${folder}'`,
    'wal_level = replica',
    'max_wal_senders = 10',
    'max_replication_slots = 10',
    `wal_keep_size = '512MB'`,
    'hot_standby = on',
    'wal_log_hints = on',
    'max_connections = 200',
    // The suite kills processes, not machines: what a process wrote is in the OS's cache.
    'fsync = off',
    'full_page_writes = on',
    `synchronous_commit = on`,
    `synchronous_standby_names = '${synchronous ? 'FIRST 1 (node1, node2)' : ''}'`,
    '',
  ].join('\n');
}
