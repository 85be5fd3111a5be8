/** What Express's `Response` and Fastify's `FastifyReply` share: `header(name, value)`. */
export interface HeaderSetter {
  header(name: string, value: string): unknown;
}

/** An Express response or a Fastify reply, as far as a handler that answers by itself needs. */
export interface SelfSender {
  status?(code: number): { json(body: unknown): unknown };
  json?: unknown;
  code?(code: number): { send(body: unknown): unknown };
  send?: unknown;
}

/** Sends `body` with `status` through the platform's own response (Express) or reply (Fastify). */
export function sendItself(response: SelfSender, status: number, body: unknown): void {
  if (response.json) response.status!(status).json(body);
  else response.code!(status).send!(body);
}
