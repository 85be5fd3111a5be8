// Hostile input against the demo: every case has one documented outcome (docs/faults.md, "Hostile
// input"), never a 5xx, and never a row for a request the module or the platform rejected.
import { connect } from 'node:net';
import { check, database, newCaller, newKey, post, send, startDemo, stats } from '../support.mjs';

const PROBLEM = /^application\/problem\+json/;
const valid = { amount: 1250, currency: 'EUR' };

/** Sends raw bytes (what an HTTP client library would refuse to send) and reads the status. */
function raw(port, bytes) {
  stats.requests++;
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.setTimeout(5_000, () => socket.destroy());
    socket.on('data', (chunk) => (received += chunk.toString('latin1')));
    socket.on('close', () => {
      const [head, ...rest] = received.split('\r\n\r\n');
      const headers = Object.fromEntries(
        head
          .split('\r\n')
          .slice(1)
          .map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      let json;
      try {
        json = JSON.parse(Buffer.from(rest.join('\r\n\r\n'), 'latin1').toString('utf8'));
      } catch {}
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), headers, json });
    });
    socket.on('error', () => undefined);
    socket.end(Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes, 'latin1'));
  });
}

function rawPost(port, headerLines, body = JSON.stringify(valid)) {
  return raw(
    port,
    `POST /payments HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n${headerLines}\r\n${body}`,
  );
}

/**
 * The cases: `run(ctx)` sends the request; `status` is the documented answer; `problem`: the body
 * is application/problem+json (with that `type` when a string); `stored`: the answer is a recorded
 * outcome (a deterministic 4xx, replayed on retry) — every other rejected request leaves no row.
 * Payments: one for a case answered 201, none for any other, counted for the case's caller
 * (`sentAs`, when the request names another).
 */
export const CASES = [
  {
    name: 'no Idempotency-Key',
    status: 400,
    problem: 'urn:nestjs-pg-idempotency:key-missing',
    run: (c) => post(c.url, { caller: c.caller, body: valid }),
  },
  {
    name: 'empty key',
    status: 400,
    problem: 'urn:nestjs-pg-idempotency:key-malformed',
    run: (c) => post(c.url, { key: '', caller: c.caller, body: valid }),
  },
  {
    name: 'whitespace-only key',
    status: 400,
    problem: 'urn:nestjs-pg-idempotency:key-malformed',
    run: (c) => post(c.url, { key: '   ', caller: c.caller, body: valid }),
  },
  {
    name: 'key not a UUID or ULID',
    status: 400,
    problem: 'urn:nestjs-pg-idempotency:key-malformed',
    run: (c) => post(c.url, { key: 'order-42', caller: c.caller, body: valid }),
  },
  {
    name: '256-character key',
    status: 400,
    problem: 'urn:nestjs-pg-idempotency:key-malformed',
    run: (c) => post(c.url, { key: 'a'.repeat(256), caller: c.caller, body: valid }),
  },
  {
    name: '10 KB key',
    status: 400,
    problem: 'urn:nestjs-pg-idempotency:key-malformed',
    run: (c) => post(c.url, { key: 'a'.repeat(10_240), caller: c.caller, body: valid }),
  },
  {
    name: "20 KB key (over Node's 16 KB header limit)",
    status: 431,
    run: (c) => post(c.url, { key: 'a'.repeat(20_480), caller: c.caller, body: valid }),
  },
  {
    name: 'two Idempotency-Key header lines',
    status: 400,
    problem: 'urn:nestjs-pg-idempotency:key-malformed',
    run: (c) => post(c.url, { caller: c.caller, body: valid, headers: { 'idempotency-key': [newKey(), newKey()] } }),
  },
  {
    name: 'comma-separated keys',
    status: 400,
    problem: 'urn:nestjs-pg-idempotency:key-malformed',
    run: (c) => post(c.url, { key: `${newKey()}, ${newKey()}`, caller: c.caller, body: valid }),
  },
  {
    name: 'an sf-list of quoted keys',
    status: 400,
    problem: 'urn:nestjs-pg-idempotency:key-malformed',
    run: (c) => post(c.url, { key: `"${newKey()}", "${newKey()}"`, caller: c.caller, body: valid }),
  },
  {
    name: 'unterminated quote',
    status: 400,
    problem: 'urn:nestjs-pg-idempotency:key-malformed',
    run: (c) => post(c.url, { key: `"${newKey()}`, caller: c.caller, body: valid }),
  },
  {
    name: 'quote inside a quoted key',
    status: 400,
    problem: 'urn:nestjs-pg-idempotency:key-malformed',
    run: (c) => post(c.url, { key: `"ab"cd"`, caller: c.caller, body: valid }),
  },
  {
    name: 'single-quoted key',
    status: 400,
    problem: 'urn:nestjs-pg-idempotency:key-malformed',
    run: (c) => post(c.url, { key: `'${newKey()}'`, caller: c.caller, body: valid }),
  },
  {
    name: 'escaped quotes around a key',
    status: 400,
    problem: 'urn:nestjs-pg-idempotency:key-malformed',
    run: (c) => post(c.url, { key: `"\\"${newKey()}\\""`, caller: c.caller, body: valid }),
  },
  {
    name: 'tab inside a quoted key',
    status: 400,
    problem: 'urn:nestjs-pg-idempotency:key-malformed',
    run: (c) => rawPost(c.port, `Authorization: Bearer ${c.caller}\r\nIdempotency-Key: "ab\tcd"\r\n`),
  },
  {
    name: 'control character (0x01) in the key',
    status: 400,
    run: (c) => rawPost(c.port, `Authorization: Bearer ${c.caller}\r\nIdempotency-Key: ${newKey()}\x01\r\n`),
  },
  {
    name: 'NUL byte in the key',
    status: 400,
    run: (c) => rawPost(c.port, `Authorization: Bearer ${c.caller}\r\nIdempotency-Key: ${newKey()}\x00\r\n`),
  },
  {
    name: 'UTF-8 bytes in the key',
    status: 400,
    problem: 'urn:nestjs-pg-idempotency:key-malformed',
    run: (c) =>
      rawPost(c.port, `Authorization: Bearer ${c.caller}\r\nIdempotency-Key: ${newKey().slice(0, 30)}\xc3\xa9\r\n`),
  },
  {
    name: 'quoted key with RFC 8941 parameters',
    status: 201,
    stored: true,
    run: (c) => post(c.url, { key: `"${newKey()}";v=1`, caller: c.caller, body: valid }),
  },
  {
    name: 'header name in upper case',
    status: 201,
    stored: true,
    run: (c) => post(c.url, { caller: c.caller, body: valid, headers: { 'IDEMPOTENCY-KEY': newKey() } }),
  },
  {
    name: 'body not JSON',
    status: 400,
    problem: true,
    run: (c) => post(c.url, { key: newKey(), caller: c.caller, body: '{"amount": 12' }),
  },
  {
    name: 'top-level JSON string',
    status: 400,
    problem: true,
    run: (c) => post(c.url, { key: newKey(), caller: c.caller, body: '"pay me"' }),
  },
  {
    name: '2 MB body',
    status: 413,
    problem: true,
    run: (c) =>
      post(c.url, { key: newKey(), caller: c.caller, body: JSON.stringify({ ...valid, pad: 'x'.repeat(2_000_000) }) }),
  },
  {
    name: 'JSON nested 5,000 levels',
    status: 400,
    problem: 'urn:nestjs-pg-idempotency:body-too-deep',
    run: (c) => post(c.url, { key: newKey(), caller: c.caller, body: '{"a":'.repeat(5_000) + '1' + '}'.repeat(5_000) }),
  },
  {
    name: 'JSON nested 60,000 levels (over the body limit)',
    status: 413,
    problem: true,
    run: (c) => post(c.url, { key: newKey(), caller: c.caller, body: '['.repeat(60_000) + ']'.repeat(60_000) }),
  },
  {
    name: 'JSON null (the JSON parser takes objects and arrays only)',
    status: 400,
    problem: true,
    run: (c) => post(c.url, { key: newKey(), caller: c.caller, body: 'null' }),
  },
  {
    name: 'JSON array',
    status: 400,
    problem: true,
    stored: true,
    run: (c) => post(c.url, { key: newKey(), caller: c.caller, body: '[]' }),
  },
  {
    name: 'unknown field',
    status: 400,
    problem: true,
    stored: true,
    run: (c) => post(c.url, { key: newKey(), caller: c.caller, body: { ...valid, admin: true } }),
  },
  {
    name: 'amount as a string',
    status: 400,
    problem: true,
    stored: true,
    run: (c) => post(c.url, { key: newKey(), caller: c.caller, body: { ...valid, amount: '1250' } }),
  },
  {
    name: 'fractional amount',
    status: 400,
    problem: true,
    stored: true,
    run: (c) => post(c.url, { key: newKey(), caller: c.caller, body: { ...valid, amount: 12.5 } }),
  },
  {
    name: 'amount 1e20',
    status: 400,
    problem: true,
    stored: true,
    run: (c) => post(c.url, { key: newKey(), caller: c.caller, body: '{"amount":1e20,"currency":"EUR"}' }),
  },
  {
    name: 'lower-case currency',
    status: 400,
    problem: true,
    stored: true,
    run: (c) => post(c.url, { key: newKey(), caller: c.caller, body: { ...valid, currency: 'eur' } }),
  },
  {
    name: '"__proto__" member (ignored by validation, kept in the fingerprint)',
    status: 201,
    stored: true,
    run: (c) =>
      post(c.url, {
        key: newKey(),
        caller: c.caller,
        body: '{"amount":2,"currency":"EUR","__proto__":{"admin":true}}',
      }),
  },
  {
    name: 'duplicate JSON member (the last wins)',
    status: 201,
    stored: true,
    run: (c) => post(c.url, { key: newKey(), caller: c.caller, body: '{"amount":1,"amount":2,"currency":"EUR"}' }),
  },
  {
    name: 'text/plain body',
    status: 415,
    problem: true,
    run: (c) =>
      post(c.url, { key: newKey(), caller: c.caller, body: 'amount=1', headers: { 'content-type': 'text/plain' } }),
  },
  {
    name: 'no Authorization',
    status: 401,
    problem: true,
    run: (c) =>
      send(c.url, {
        headers: { 'content-type': 'application/json', 'idempotency-key': newKey() },
        body: JSON.stringify(valid),
      }),
  },
  {
    name: '10 KB bearer token',
    status: 401,
    problem: true,
    sentAs: () => 'x'.repeat(10_240),
    run: (c) => post(c.url, { key: newKey(), caller: 'x'.repeat(10_240), body: valid }),
  },
  {
    name: 'unicode normalisation twins (NFC, then NFD with the same key)',
    status: 422,
    problem: 'urn:nestjs-pg-idempotency:key-reused',
    stored: true,
    run: async (c) => {
      const key = newKey();
      await post(c.url, { key, caller: c.caller, body: `{"amount":1,"currency":"EUR","note":"${'\u00e9'}"}` });
      return post(c.url, { key, caller: c.caller, body: `{"amount":1,"currency":"EUR","note":"${'e\u0301'}"}` });
    },
  },
];

export default async function hostileInput({ databaseUrl }) {
  const demo = await startDemo(databaseUrl);
  const db = database(databaseUrl);
  const failures = [];
  try {
    for (const testCase of CASES) {
      const caller = newCaller('hostile');
      const ctx = { url: `${demo.url}/payments`, port: demo.port, caller };
      const answer = await testCase.run(ctx);
      const [{ n }] = await db.rows('SELECT count(*)::int AS n FROM idempotency_keys WHERE caller = $1', [caller]);
      const [{ n: payments }] = await db.rows('SELECT count(*)::int AS n FROM payments WHERE caller = $1', [
        testCase.sentAs?.() ?? caller,
      ]);
      const executions = testCase.status === 201 ? 1 : 0;
      const problems = [];
      if (answer.status !== testCase.status) problems.push(`status ${answer.status}, expected ${testCase.status}`);
      if (answer.status >= 500 || answer.status === 0) problems.push('a 5xx or no answer');
      if (testCase.problem && !PROBLEM.test(answer.headers?.['content-type'] ?? ''))
        problems.push('not application/problem+json');
      if (typeof testCase.problem === 'string' && answer.json?.type !== testCase.problem)
        problems.push(`type ${answer.json?.type}`);
      if (n !== (testCase.stored ? 1 : 0)) problems.push(`${n} rows left in idempotency_keys`);
      if (payments !== executions) problems.push(`${payments} payments written, expected ${executions}`);
      if (problems.length) failures.push(`${testCase.name}: ${problems.join('; ')}`);
    }
    check(failures.length === 0, `hostile input:\n  ${failures.join('\n  ')}`);
    check((await demo.stop()) === 0, 'the demo did not exit cleanly after the hostile input');
    return `${CASES.length} cases, each with its documented outcome, no 5xx, no row left by a rejected request`;
  } finally {
    await demo.kill().catch(() => undefined);
    await db.end();
  }
}
