// Child processes of the bench (servers, load driver, storm driver) and the little request/reply
// protocol the orchestrator speaks with them over Node's IPC channel.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const children = new Set();

/**
 * Forks `script` (relative to bench/) and waits for its `ready` message. Returns
 * `{ pid, ready, call(command, args), kill() }`; `ready` is the ready message (a server's port).
 * `execPath` runs the script with another program than this Node.js (`execArgv` come first).
 */
export async function start(script, { env = {}, execArgv = [], execPath, name = script, timeoutMs = 120_000 } = {}) {
  const child = fork(fileURLToPath(new URL(script, import.meta.url)), [], {
    env: { ...process.env, ...env },
    execArgv,
    execPath,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.add(child);
  const pending = new Map();
  let nextId = 1;
  let exited = false;
  let onReady;
  const ready = new Promise((resolve, reject) => {
    onReady = resolve;
    child.once('exit', (code, signal) => reject(new Error(`${name} exited before it was ready (${signal ?? code})`)));
    setTimeout(() => reject(new Error(`${name} was not ready within ${timeoutMs / 1000} s`)), timeoutMs).unref();
  });
  child.on('message', (message) => {
    if (message.type === 'ready') return onReady(message);
    const call = pending.get(message.id);
    if (!call) return;
    pending.delete(message.id);
    if (message.ok) call.resolve(message.result);
    else call.reject(new Error(`${name}: ${message.error}`));
  });
  child.on('exit', (code, signal) => {
    exited = true;
    children.delete(child);
    for (const call of pending.values()) call.reject(new Error(`${name} exited (${signal ?? code})`));
    pending.clear();
  });
  const readyMessage = await ready;
  return {
    pid: child.pid,
    ready: readyMessage,
    call(command, args) {
      if (exited) return Promise.reject(new Error(`${name} is not running`));
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        child.send({ id, command, args });
      });
    },
    async kill() {
      if (exited) return;
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await gone;
      clearTimeout(timer);
    },
  };
}

/** Kills every child still running (each by its own pid), e.g. when the orchestrator fails. */
export function killAll() {
  for (const child of children) child.kill('SIGKILL');
}

/** The child side: answer `ready`, then run `handlers[command](args)` for each message. */
export function answer(handlers, readyMessage = {}) {
  process.on('message', async ({ id, command, args }) => {
    try {
      const handler = handlers[command];
      if (!handler) throw new Error(`unknown command ${command}`);
      process.send({ id, ok: true, result: await handler(args) });
    } catch (error) {
      process.send({ id, ok: false, error: error.stack ?? String(error) });
    }
  });
  process.on('disconnect', () => process.exit(0));
  process.send({ type: 'ready', ...readyMessage });
}
