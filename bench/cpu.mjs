// Where the CPU goes during a measurement (Linux only; elsewhere every figure is null): CPU time
// of the server process, of the PostgreSQL server (postmaster and all its children, found from a
// backend pid, so only when PostgreSQL runs on this machine), of the bench's drivers, and of
// everything else on the machine, which is the noise the measurement suffered.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';

const linux = existsSync('/proc/stat');
const ticksPerSecond = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/**
 * `{ pid, ppid, ticks, reaped }` of every process: its user + system time, and that of its
 * children it has waited for (so a PostgreSQL backend or autovacuum worker that exits
 * mid-measurement still counts, in the postmaster's `reaped`), in clock ticks.
 */
function processes() {
  const list = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      list.push({
        pid: Number(entry),
        ppid: Number(fields[1]),
        ticks: Number(fields[11]) + Number(fields[12]),
        reaped: Number(fields[13]) + Number(fields[14]),
      });
    } catch {
      // the process ended meanwhile
    }
  }
  return list;
}

/** Busy clock ticks of the whole machine (all CPUs), from /proc/stat. */
function machineBusy() {
  const [, user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
    .split('\n', 1)[0]
    .trim()
    .split(/\s+/)
    .map(Number);
  return user + nice + system + irq + softirq + steal;
}

/** The postmaster's pid when PostgreSQL runs on this machine, else null. */
export async function localPostmaster(sql) {
  if (!linux) return null;
  const [{ pid }] = await sql('SELECT pg_backend_pid() AS pid');
  const backend = processes().find((p) => p.pid === pid);
  return backend ? backend.ppid : null;
}

/**
 * `groups` maps a name to a pid; `postmaster` (or null) adds a `postgres` group. `take()`
 * snapshots; `since(snapshot)` gives each group's CPU seconds, plus `others` (the machine's
 * busy time not spent in the groups or in this process) and the wall time.
 */
export function cpuMeter(groups, postmaster) {
  const take = () => {
    if (!linux) return null;
    const all = processes();
    const ticksOf = (pid) => all.find((p) => p.pid === pid)?.ticks ?? 0;
    const snapshot = { wall: performance.now(), busy: machineBusy(), self: ticksOf(process.pid) };
    for (const [name, pid] of Object.entries(groups)) snapshot[name] = ticksOf(pid);
    if (postmaster) {
      snapshot.postgres = all
        .filter((p) => p.pid === postmaster || p.ppid === postmaster)
        .reduce((n, p) => n + p.ticks + (p.pid === postmaster ? p.reaped : 0), 0);
    }
    return snapshot;
  };
  return {
    take,
    since(before) {
      const after = take();
      if (!before || !after) return null;
      const seconds = (name) => (after[name] - before[name]) / ticksPerSecond;
      const result = { wallSeconds: (after.wall - before.wall) / 1000 };
      let ours = seconds('self');
      for (const name of [...Object.keys(groups), ...(postmaster ? ['postgres'] : [])]) {
        result[name] = seconds(name);
        ours += result[name];
      }
      result.others = Math.max(0, seconds('busy') - ours);
      return result;
    },
  };
}
