import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';

/** What a client sees of a response. */
export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  text: string;
  json: any;
}

export interface Send {
  method?: string;
  /** The Idempotency-Key header; an array sends one header line per value. */
  key?: string | string[];
  /** The bearer token (the caller); `null` sends no Authorization header. */
  caller?: string | null;
  body?: unknown;
  /** Raw body text, sent as is. */
  raw?: string;
  headers?: Record<string, string>;
}

/** Sends one request with node:http (so duplicate header lines stay duplicate). */
export function send(
  url: string,
  { method = 'POST', key, caller = 'alice', body, raw, headers = {} }: Send = {},
): Promise<Answer> {
  const payload = raw ?? (body === undefined ? undefined : JSON.stringify(body));
  const outgoing: Record<string, string | string[]> = { ...headers };
  if (payload !== undefined && !outgoing['content-type']) outgoing['content-type'] = 'application/json';
  if (key !== undefined) outgoing['idempotency-key'] = key;
  if (caller !== null) outgoing.authorization = `Bearer ${caller}`;
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers: outgoing, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const buffer = Buffer.concat(chunks);
        const text = buffer.toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode!, headers: res.headers, body: buffer, text, json });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * Sends `head` (request line and header lines, CRLF-terminated, without the blank line) and
 * `body` as raw bytes over a new connection, so bytes a client library would refuse to send
 * (control characters in a header) reach the server. Resolves with the response's status code.
 */
export async function sendRawBytes(url: string, head: string, body = ''): Promise<number> {
  const { status } = await sendRawRequest(
    url,
    `${head}Connection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  if (Number.isNaN(status)) throw new Error('the server closed the connection without a response');
  return status;
}

/** Writes `request` (a whole HTTP/1.1 message, latin1) over a new connection: the answer's status and text. */
export function sendRawRequest(url: string, request: string): Promise<{ status: number; text: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]), text });
    });
    socket.write(Buffer.from(request, 'latin1'));
  });
}

export const newKey = (): string => randomUUID();
export const newCaller = (): string => `caller-${randomUUID()}`;
export const validPayment = { amount: 1250, currency: 'EUR' };
