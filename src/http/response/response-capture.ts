import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { IdempotencyError } from '../../idempotency.errors.js';

/** A response as the app finished it, before any byte reached the socket. */
export interface CapturedResponse {
  status: number;
  headers: OutgoingHttpHeaders;
  body: Buffer;
}

/** What to send in place of the captured response: status, headers to set, body bytes. */
export interface ResponseReplacement {
  status: number;
  headers: [name: string, value: string][];
  body: Buffer;
  /** Headers of the captured response to drop first (lower-case). */
  drop: readonly string[];
  /**
   * The app's answer is withdrawn (a problem goes out instead): every header it set goes with it,
   * back to those the response had before the handler ran (what middleware set).
   */
  withdraw?: boolean;
}

/**
 * Holds back everything the app writes to `raw` (status line, headers, body) until it ends the
 * response, then awaits `settle` with the finished response. `settle` may record it (the
 * response leaves only after that write) or return a replacement to send instead. This sits
 * below Nest's serializers, interceptors and exception filters and below the platform's own
 * `send`, so what is captured is exactly what the client would receive. `onAbandon` runs when
 * the client goes away before the app ended the response.
 */
export function captureResponse(
  raw: ServerResponse,
  settle: (response: CapturedResponse) => Promise<ResponseReplacement | void>,
  onAbandon: () => void,
): void {
  const original = { writeHead: raw.writeHead, write: raw.write, end: raw.end };
  const before = raw.getHeaders();
  const chunks: Buffer[] = [];
  let head: Parameters<ServerResponse['writeHead']> | undefined;
  let ended = false;

  const toBuffer = (chunk: unknown, encoding?: unknown): Buffer | undefined => {
    if (chunk === undefined || chunk === null || typeof chunk === 'function') return undefined;
    if (Buffer.isBuffer(chunk)) return chunk;
    if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    return Buffer.from(String(chunk), typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
  };

  // Once the app ended the response, what it writes next (a platform sending the handler's
  // return value after the handler answered by itself) is dropped, as it would be on the socket.
  raw.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse['writeHead']>) {
    if (!ended) head = copyOf(args);
    return this;
  } as ServerResponse['writeHead'];

  raw.write = function (this: ServerResponse, chunk: unknown, encoding?: unknown, callback?: unknown) {
    const buffer = ended ? undefined : toBuffer(chunk, encoding);
    if (buffer) chunks.push(buffer);
    const done = typeof encoding === 'function' ? encoding : callback;
    if (typeof done === 'function') process.nextTick(done as () => void);
    return true;
  } as ServerResponse['write'];

  raw.end = function (this: ServerResponse, chunk?: unknown, encoding?: unknown, callback?: unknown) {
    if (ended) return this;
    ended = true;
    const buffer = toBuffer(chunk, encoding);
    if (buffer) chunks.push(buffer);
    // The app is told its end() is done at once, as its write()s are: an app that waits for it
    // (a handler awaiting `res.end(body, callback)`) must not wait for the response it holds.
    const done = [chunk, encoding, callback].find((arg) => typeof arg === 'function') as (() => void) | undefined;
    if (done) process.nextTick(done);
    const restore = () => Object.assign(raw, original);
    const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
    if (head) applyHead(raw, head);
    const headers = raw.getHeaders(); // a fresh object: the headers as the app ended the response
    const captured = { status: raw.statusCode, headers, body };
    settle(captured).then(
      (replacement) => {
        restore();
        if (replacement) {
          if (replacement.withdraw) restoreHead(raw, replacement.status, before);
          send(raw, replacement);
        } else {
          restoreHead(raw, captured.status, headers);
          (original.end as (chunk: Buffer) => void).call(raw, body);
        }
      },
      (error: unknown) => {
        restore();
        raw.destroy(error instanceof Error ? error : new IdempotencyError(String(error), { cause: error }));
      },
    );
    return this;
  } as ServerResponse['end'];

  raw.once('close', () => {
    if (!ended) onAbandon();
  });
}

/**
 * Sends `replacement` in place of whatever the app writes to `raw` (a replay): like
 * `captureResponse` with a `settle` that always replaces, without holding on to what the app
 * wrote or waiting for anything.
 */
export function replaceResponse(raw: ServerResponse, replacement: ResponseReplacement): void {
  const original = { writeHead: raw.writeHead, write: raw.write, end: raw.end };
  let head: Parameters<ServerResponse['writeHead']> | undefined;
  raw.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse['writeHead']>) {
    head = args;
    return this;
  } as ServerResponse['writeHead'];
  raw.write = function (this: ServerResponse, _chunk: unknown, encoding?: unknown, callback?: unknown) {
    const done = typeof encoding === 'function' ? encoding : callback;
    if (typeof done === 'function') process.nextTick(done as () => void);
    return true;
  } as ServerResponse['write'];
  raw.end = function (this: ServerResponse, chunk?: unknown, encoding?: unknown, callback?: unknown) {
    Object.assign(raw, original);
    const done = [chunk, encoding, callback].find((arg) => typeof arg === 'function') as (() => void) | undefined;
    if (head) applyHead(raw, head);
    send(raw, replacement, done);
    return this;
  } as ServerResponse['end'];
}

/**
 * Sends `replacement` instead of what the app wrote, around the headers the app set on `raw`
 * (or passed to `writeHead()`: Fastify passes its reply headers there, `@Header()` and
 * `reply.header()`), so that both platforms send the same headers around a replacement.
 */
function send(raw: ServerResponse, replacement: ResponseReplacement, done?: () => void): void {
  for (const name of replacement.drop) raw.removeHeader(name);
  raw.removeHeader('content-length');
  raw.removeHeader('transfer-encoding');
  setHeaderPairs(raw, replacement.headers);
  // No Content-Length on a status that has no body (RFC 9110 §8.6): as the first answer had none.
  if (!bodiless(replacement.status)) raw.setHeader('content-length', replacement.body.length);
  raw.statusCode = replacement.status;
  raw.end(replacement.body, done);
}

/**
 * `writeHead()`'s arguments with their headers copied: a platform may reuse, and change, the
 * object it passed (Fastify's reply headers) before the held response leaves.
 */
function copyOf(args: Parameters<ServerResponse['writeHead']>): Parameters<ServerResponse['writeHead']> {
  return args.map((arg) =>
    Array.isArray(arg) ? [...arg] : arg && typeof arg === 'object' ? { ...arg } : arg,
  ) as Parameters<ServerResponse['writeHead']>;
}

/**
 * Puts the status and the headers set on `raw` back as they were at some point: when the app
 * ended the response (whatever changed them since, Nest answering a handler's error or its
 * return value after the handler had sent its own answer, must not go out with the answer that
 * was recorded), or before the handler ran (for an answer that is withdrawn).
 */
function restoreHead(raw: ServerResponse, status: number, headers: OutgoingHttpHeaders): void {
  raw.statusCode = status;
  for (const name of raw.getHeaderNames()) if (!(name in headers)) raw.removeHeader(name);
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined && raw.getHeader(name) !== value) raw.setHeader(name, value);
  }
}

/**
 * Puts what the app passed to `writeHead(status, [message], [headers])` on `raw` itself, as Node
 * does when headers were set before, except that a header named several times in a flat
 * `[name, value, …]` list keeps every value (Node keeps the last): what is recorded, and what is
 * sent, is then read from `raw` alone.
 */
function applyHead(raw: ServerResponse, [status, message, headers]: readonly unknown[]): void {
  raw.statusCode = status as number;
  if (typeof message === 'string') raw.statusMessage = message;
  else headers = message;
  if (Array.isArray(headers)) {
    const pairs: [string, string | string[]][] = [];
    for (let i = 0; i + 1 < headers.length; i += 2)
      pairs.push([String(headers[i]).toLowerCase(), headers[i + 1] as string | string[]]);
    setHeaderPairs(raw, pairs);
  } else if (headers && typeof headers === 'object') {
    for (const [name, value] of Object.entries(headers as OutgoingHttpHeaders))
      if (value !== undefined) raw.setHeader(name, value);
  }
}

/**
 * Sets `[name, value]` pairs on `raw`, replacing what it had under each name; a name that comes
 * several times (`Link`, `Vary`) keeps every value.
 */
function setHeaderPairs(raw: ServerResponse, pairs: readonly (readonly [string, string | string[]])[]): void {
  const set: string[] = [];
  for (const [name, value] of pairs) {
    if (set.includes(name)) {
      raw.appendHeader(name, value);
    } else {
      raw.setHeader(name, value);
      set.push(name);
    }
  }
}

/** Statuses whose responses have no body, nor a Content-Length: 1xx, 204, 304. */
function bodiless(status: number): boolean {
  return status < 200 || status === 204 || status === 304;
}
