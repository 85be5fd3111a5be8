// A PgBouncer in transaction mode in front of a PostgreSQL, for the pooler suites (npm run
// test:pooler) and by hand:
//
//   node scripts/pgbouncer.mjs start <postgres-url> [port]   prints the URL through PgBouncer
//   node scripts/pgbouncer.mjs stop [port]
//
// It runs the machine's `pgbouncer` (Debian's package: `apt-get install pgbouncer`) from a config
// of its own in a folder of its own (the OS temp dir, `nestjs-pg-idempotency-pgbouncer-<port>`),
// on a port of its own (default 6544), in transaction mode with a pool of 5 server connections
// per database and user (PGBOUNCER_POOL_SIZE), trusting the user of the URL as PostgreSQL does.
// Idle server connections are handed out in turn (server_round_robin), not last-released first:
// a client's consecutive transactions land on different server sessions whenever several are
// idle, however slowly the client sends them.
// As root it runs as the `postgres` OS user (PgBouncer refuses root).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const DEFAULT_PORT = 6544;

export function pgbouncerFolder(port) {
  return join(tmpdir(), `nestjs-pg-idempotency-pgbouncer-${port}`);
}

/** The machine's `pgbouncer`, or `undefined` when it is not installed. */
export function pgbouncerBinary() {
  return which('pgbouncer');
}

/**
 * Starts PgBouncer in front of `url`'s server on `port`; resolves the same URL through it.
 * `settings` adds lines to its `[pgbouncer]` section (`{ server_login_retry: 1 }`).
 */
export async function startPgBouncer(
  url,
  port = DEFAULT_PORT,
  poolSize = Number(process.env.PGBOUNCER_POOL_SIZE ?? 5),
  settings = {},
) {
  const binary = pgbouncerBinary();
  if (!binary) throw new Error('pgbouncer is not installed (Debian: apt-get install pgbouncer)');
  const target = new URL(url);
  const user = decodeURIComponent(target.username || 'postgres');
  await stopPgBouncer(port);
  const folder = pgbouncerFolder(port);
  mkdirSync(folder, { recursive: true, mode: 0o755 });
  const asRoot = process.getuid?.() === 0;
  writeFileSync(join(folder, 'userlist.txt'), `"${user}" ""\n`);
  writeFileSync(
    join(folder, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${target.hostname} port=${target.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(folder, 'userlist.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${poolSize}`,
      'max_client_conn = 1000',
      'server_reset_query =',
      'server_round_robin = 1',
      'ignore_startup_parameters = extra_float_digits,options,statement_timeout',
      `logfile = ${join(folder, 'pgbouncer.log')}`,
      `pidfile = ${join(folder, 'pgbouncer.pid')}`,
      ...Object.entries(settings).map(([name, value]) => `${name} = ${value}`),
      '',
    ].join('\n'),
  );
  if (asRoot) execFileSync('chown', ['-R', 'postgres', folder]);
  const args = ['-d', ...(asRoot ? ['-u', 'postgres'] : []), join(folder, 'pgbouncer.ini')];
  const started = spawnSync(binary, args, { encoding: 'utf8' });
  if (started.status !== 0)
    throw new Error(`pgbouncer did not start: ${started.stderr || started.stdout}\n${log(folder)}`);
  for (const deadline = Date.now() + 10_000; !(await listening(port));) {
    if (Date.now() > deadline) throw new Error(`pgbouncer does not listen on ${port}:\n${log(folder)}`);
    await sleep(50);
  }
  const through = new URL(url);
  through.hostname = '127.0.0.1';
  through.port = String(port);
  return through.href;
}

/**
 * Points the PgBouncer on `port` at another server (`targetPort` on the same host) and reloads
 * it (SIGHUP), as a failover hook does once a standby is promoted.
 */
export function repointPgBouncer(port, targetPort) {
  const folder = pgbouncerFolder(port);
  const ini = join(folder, 'pgbouncer.ini');
  writeFileSync(
    ini,
    readFileSync(ini, 'utf8').replace(/^\* = host=(\S+) port=\d+$/m, `* = host=$1 port=${targetPort}`),
  );
  process.kill(Number(readFileSync(join(folder, 'pgbouncer.pid'), 'utf8').trim()), 'SIGHUP');
}

/** Stops the PgBouncer on `port`, if one runs, and removes its folder. */
export async function stopPgBouncer(port = DEFAULT_PORT) {
  const folder = pgbouncerFolder(port);
  const pidfile = join(folder, 'pgbouncer.pid');
  if (existsSync(pidfile)) {
    const pid = Number(readFileSync(pidfile, 'utf8').trim());
    try {
      process.kill(pid, 'SIGTERM');
      for (const deadline = Date.now() + 5_000; alive(pid) && Date.now() < deadline;) await sleep(50);
      if (alive(pid)) process.kill(pid, 'SIGKILL');
    } catch {
      // not running any more
    }
  }
  rmSync(folder, { recursive: true, force: true });
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function listening(port) {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

function which(command) {
  for (const dir of (process.env.PATH ?? '').split(':').concat(['/usr/sbin', '/usr/local/sbin', '/sbin'])) {
    if (dir && existsSync(join(dir, command))) return join(dir, command);
  }
  return undefined;
}

function log(folder) {
  const file = join(folder, 'pgbouncer.log');
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').slice(-20).join('\n') : '';
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [command, first, second] = process.argv.slice(2);
  if (command === 'start' && first)
    process.stdout.write(`${await startPgBouncer(first, Number(second ?? DEFAULT_PORT))}\n`);
  else if (command === 'stop') await stopPgBouncer(Number(first ?? DEFAULT_PORT));
  else {
    process.stderr.write('usage: node scripts/pgbouncer.mjs start <postgres-url> [port] | stop [port]\n');
    process.exit(2);
  }
}
