// A pg_auto_failover formation of the machine's PostgreSQL (Debian's `postgresql-<major>-auto-failover`:
// `pg_autoctl`), for the failover suite: a monitor and two nodes, each a `pg_autoctl` service
// on a port of its own, in a folder of their own under the OS temp dir, run as the `postgres`
// OS user when this runs as root. The monitor decides the failover; a router (the proxy, as
// HAProxy on the monitor's state would be) asks the monitor for the primary every 100 ms and
// sends new connections there.
// - kill(node): SIGKILL to the node's pg_autoctl services, its postmaster and its backends (a
//   machine that died);
// - remove(): every process stopped, the folder removed.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { freePorts } from './free-ports.mjs';
import { postgresBin } from './postgres-pair.mjs';
import { until } from './readiness.mjs';
import { startTcpProxy } from './tcp-proxy.mjs';

const root = process.getuid?.() === 0;
const FORMATION_BOUND_MS = 120_000;

/** A formation whose nodes did not reach their states in time: nothing of the app was run yet. */
export class FormationNotFormedError extends Error {}

/** The machine's `pg_autoctl`, or `undefined`. */
export function pgAutoctl() {
  for (const dir of ['/usr/bin', '/usr/local/bin', postgresBin()].filter(Boolean)) {
    if (existsSync(join(dir, 'pg_autoctl'))) return join(dir, 'pg_autoctl');
  }
  return undefined;
}

/**
 * Starts the monitor on `ports[0]` and two nodes on the others (three free ports by default);
 * resolves once the first is the primary and the second its secondary. `monitorSettings` are the
 * monitor's `pgautofailover.*` settings (its health checks), set before the nodes join.
 */
export async function startFormation({ ports, monitorSettings = {} } = {}) {
  ports ??= await freePorts(3);
  const bin = postgresBin();
  const folder = mkdtempSync(join(tmpdir(), 'nestjs-pg-idempotency-autofailover-'));
  if (root) chownSync(folder, uid('-u'), uid('-g'));
  const services = [];
  const monitor = { name: 'monitor', port: ports[0], data: join(folder, 'monitor'), log: join(folder, 'monitor.log') };
  const monitorUrl = `postgres://autoctl_node@127.0.0.1:${monitor.port}/pg_auto_failover?sslmode=disable`;
  const nodes = ports.slice(1).map((port, index) => ({
    name: `node${index + 1}`,
    port,
    data: join(folder, `node${index + 1}`),
    log: join(folder, `node${index + 1}.log`),
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
  }));
  const common = ['--pgctl', join(bin, 'pg_ctl'), '--hostname', '127.0.0.1', '--auth', 'trust', '--no-ssl', '--run'];

  const formation = {
    folder,
    nodes,
    monitorUrl,
    async start() {
      service(monitor, ['create', 'monitor', '--pgdata', monitor.data, '--pgport', String(monitor.port), ...common]);
      await until(
        async () => (await monitorQuery('SELECT 1')).length === 1,
        'pg_auto_failover: the monitor accepting connections',
        FORMATION_BOUND_MS,
      );
      const superuser = `postgres://postgres@127.0.0.1:${monitor.port}/pg_auto_failover`;
      for (const [name, value] of Object.entries(monitorSettings))
        await queryOn(superuser, `ALTER SYSTEM SET pgautofailover.${name} = '${value}'`);
      await queryOn(superuser, 'SELECT pg_reload_conf()');
      for (const [index, node] of nodes.entries()) {
        service(node, [
          'create',
          'postgres',
          '--pgdata',
          node.data,
          '--pgport',
          String(node.port),
          '--name',
          node.name,
          '--dbname',
          'postgres',
          '--monitor',
          monitorUrl,
          ...common,
        ]);
        const wanted = index === 0 ? ['single'] : ['primary', 'secondary'];
        try {
          await until(
            async () => {
              const states = await formation.states();
              return wanted.every((state, at) => states[nodes[at].name] === state);
            },
            `pg_auto_failover: ${node.name} joining (${wanted.join(', ')})`,
            FORMATION_BOUND_MS,
          );
        } catch (error) {
          throw new FormationNotFormedError(`${error.message}; the monitor's nodes: ${await formation.describe()}`);
        }
      }
    },
    /** The monitor's view of each node (states, health, last report, LSN), for a failure's message. */
    async describe() {
      const rows = await monitorQuery(
        `SELECT nodename, reportedstate, goalstate, health, healthchecktime, reporttime, reportedpgisrunning,
                reportedrepstate, reportedlsn FROM pgautofailover.node ORDER BY nodeid`,
      );
      return JSON.stringify(rows);
    },
    /** Each node's state as the monitor reports it. */
    async states() {
      const rows = await monitorQuery(`SELECT nodename, reportedstate FROM pgautofailover.node`);
      return Object.fromEntries(rows.map((row) => [row.nodename, row.reportedstate]));
    },
    /** The port of the node the monitor names primary now, or `undefined` when it names none. */
    async primaryPort() {
      const rows = await monitorQuery(`SELECT primary_port FROM pgautofailover.get_primary('default', 0)`);
      return rows[0]?.primary_port ?? undefined;
    },
    kill(node) {
      const services_ = services.filter((entry) => entry.node === node);
      for (const { child } of services_) signalGroup(child.pid, 'SIGKILL');
      const pid = postmasterPid(node);
      if (pid) {
        const children = spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).stdout.split('\n');
        for (const victim of [pid, ...children.filter(Boolean).map(Number)]) signal(victim, 'SIGKILL');
      }
    },
    async remove() {
      for (const { child } of services) signalGroup(child.pid, 'SIGTERM');
      await whileTrue(() => services.some(({ child }) => signalGroup(child.pid, 0)), 5_000);
      for (const { child } of services) signalGroup(child.pid, 'SIGKILL');
      for (const node of [monitor, ...nodes]) {
        const pid = postmasterPid(node);
        if (pid) signal(pid, 'SIGQUIT');
      }
      await whileTrue(() => [monitor, ...nodes].some((node) => postmasterPid(node)), 5_000);
      rmSync(folder, { recursive: true, force: true });
    },
    logs() {
      return [monitor, ...nodes]
        .map((node) => `--- ${node.name}\n${existsSync(node.log) ? readFileSync(node.log, 'utf8').slice(-3000) : ''}`)
        .join('\n');
    },
  };
  return formation;

  /** Runs `pg_autoctl args` for `node` as a service in a process group of its own. */
  function service(node, args) {
    const env = {
      ...process.env,
      XDG_CONFIG_HOME: join(folder, `${node.name}-config`),
      XDG_DATA_HOME: join(folder, `${node.name}-share`),
      XDG_RUNTIME_DIR: join(folder, `${node.name}-run`),
    };
    const out = openSync(node.log, 'a');
    const command = pgAutoctl();
    const [file, argv] = root
      ? [
          'runuser',
          [
            '-u',
            'postgres',
            '--',
            'env',
            ...Object.entries(envOnly(env)).map(([k, v]) => `${k}=${v}`),
            command,
            ...args,
          ],
        ]
      : [command, args];
    const child = spawn(file, argv, { env, stdio: ['ignore', out, out], detached: true });
    child.unref();
    services.push({ node, child });
  }

  async function monitorQuery(text) {
    try {
      return await queryOn(monitorUrl, text);
    } catch {
      return [];
    }
  }
}

/** A router in front of the formation: the proxy, repointed to the node the monitor names primary. */
export async function startFormationRouter(formation) {
  let current = await formation.primaryPort();
  const proxy = await startTcpProxy({ target: current });
  let stopped = false;
  const watching = (async () => {
    while (!stopped) {
      let port;
      try {
        port = await formation.primaryPort();
      } catch {
        port = undefined;
      }
      if (port === undefined) proxy.pause();
      else if (port !== current) {
        proxy.repoint(port);
        current = port;
      } else proxy.resume();
      await sleep(100);
    }
  })();
  return {
    port: proxy.port,
    async close() {
      stopped = true;
      await watching;
      await proxy.close();
    },
  };
}

function envOnly(env) {
  const { XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_RUNTIME_DIR } = env;
  return { XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_RUNTIME_DIR };
}

async function queryOn(url, text) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  await client.connect();
  try {
    return (await client.query(text)).rows;
  } finally {
    await client.end();
  }
}

/** Polls `condition` every 50 ms while it holds, for at most `ms`. */
async function whileTrue(condition, ms) {
  for (const deadline = Date.now() + ms; condition() && Date.now() < deadline;) await sleep(50);
}

function postmasterPid(node) {
  const file = join(node.data, 'postmaster.pid');
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
  return signal(pid, 0) ? pid : undefined;
}

function signal(pid, name) {
  try {
    process.kill(pid, name);
    return true;
  } catch {
    return false;
  }
}

function signalGroup(pid, name) {
  return signal(-pid, name);
}

function uid(flag) {
  return Number(execFileSync('id', [flag, 'postgres']).toString());
}
