// The address an app reaches its primary through, as HAProxy in front of a Patroni or
// pg_auto_failover pair does: every new connection goes to the current target; `repoint(port)`
// sends new connections to the new primary and closes every connection to the old one (HAProxy's
// `on-marked-down shutdown-sessions`), so no client keeps writing to a server that is no longer
// the primary. `pause()` refuses new connections (no primary known), `resume()` accepts them again.
import { createConnection, createServer } from 'node:net';

export async function startTcpProxy({ port = 0, target }) {
  let current = target;
  let paused = false;
  const sessions = new Set();
  const server = createServer((client) => {
    if (paused) {
      client.destroy();
      return;
    }
    const upstream = createConnection({ host: '127.0.0.1', port: current });
    const session = { client, upstream, target: current };
    sessions.add(session);
    const close = () => {
      sessions.delete(session);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port: server.address().port,
    /** New connections to `port`; every open connection to another target is closed. */
    repoint(port) {
      current = port;
      paused = false;
      for (const session of [...sessions]) if (session.target !== port) session.client.destroy();
    },
    /** Closes every open connection and refuses new ones until `repoint()` or `resume()`. */
    pause() {
      paused = true;
      for (const session of [...sessions]) session.client.destroy();
    },
    resume() {
      paused = false;
    },
    /**
     * Stops forwarding what the target sends (it stays in the sockets' buffers, as on a slow or
     * broken link) until `drop()`, which closes every connection and loses it.
     */
    hold() {
      for (const session of sessions) {
        session.upstream.unpipe(session.client);
        session.upstream.pause();
      }
    },
    drop() {
      for (const session of [...sessions]) {
        session.upstream.destroy();
        session.client.destroy();
      }
    },
    close() {
      for (const session of [...sessions]) session.client.destroy();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}
