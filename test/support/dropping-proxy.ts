import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A loopback HTTP proxy in front of `upstream` that can lose answers on the way back. */
export interface DroppingProxy {
  url: string;
  /** The bodies of the answers it received from upstream and never passed on, in order. */
  dropped: Buffer[];
  /** How many requests it forwarded upstream. */
  forwarded(): number;
  close(): Promise<void>;
}

/**
 * Forwards every request to `upstream`. For the first `drop` requests it reads the whole answer
 * (so the server has finished, and committed, its work) and then destroys the client's
 * connection instead of answering: what a client sees when a response is lost in the network.
 */
export async function startDroppingProxy(upstream: string, drop = 1): Promise<DroppingProxy> {
  const dropped: Buffer[] = [];
  let count = 0;
  const server: Server = createServer((req, res) => {
    const index = count++;
    const target = new URL(req.url ?? '/', upstream);
    const outgoing = httpRequest(target, { method: req.method, headers: req.headers, agent: false }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('end', () => {
        const body = Buffer.concat(chunks);
        if (index < drop) {
          dropped.push(body);
          req.socket.destroy();
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        res.end(body);
      });
    });
    outgoing.on('error', () => req.socket.destroy());
    req.pipe(outgoing);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    dropped,
    forwarded: () => count,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
