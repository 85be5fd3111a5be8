// A stand-in for a card processor's refund API, a server of its own: POST /refunds with an
// Idempotency-Key makes a refund once per key (a call with a key it has seen gets that refund
// again) and answers after `latencyMs`, the refund made before the answer leaves. It counts the
// calls each key got. `npm run processor` starts it on PORT (default 4010); check.mjs starts one.
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

export async function startCardProcessor({ port = 0, latencyMs = 200 } = {}) {
  /** Idempotency key → the refund made for it, and how many calls carried the key. */
  const refunds = new Map();
  let failing = 0;
  const server = createServer(async (request, response) => {
    let text = '';
    for await (const chunk of request) text += chunk;
    const key = request.headers['idempotency-key'];
    if (request.method !== 'POST' || request.url !== '/refunds' || !key) return response.writeHead(400).end();
    const { payment, amount } = JSON.parse(text);
    const refund = refunds.get(key) ?? { id: `re_${randomUUID()}`, payment, amount, calls: 0 };
    refund.calls += 1;
    refunds.set(key, refund);
    await sleep(latencyMs);
    if (failing > 0) {
      failing -= 1;
      return response.writeHead(502).end(); // the refund is made; its answer is lost
    }
    response.writeHead(201, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ id: refund.id, payment, amount: refund.amount }));
  });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    /** The refunds of a payment: one per idempotency key, with the calls that key got. */
    refundsOf: (payment) => [...refunds.values()].filter((refund) => refund.payment === payment),
    /** The next `count` calls make their refund and answer 502, as a lost answer does. */
    failAnswers: (count) => (failing = count),
    close: () => new Promise((done) => server.close(done)),
  };
}

if (resolve(process.argv[1] ?? '') === fileURLToPath(import.meta.url)) {
  const processor = await startCardProcessor({ port: Number(process.env.PORT ?? 4010) });
  console.log(`card processor listening on ${processor.url}`);
}
