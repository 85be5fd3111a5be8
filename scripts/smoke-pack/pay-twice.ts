// What the cls, Drizzle and Prisma smoke apps check through the package's client, on a running app whose
// POST /payments writes one payment for the `x-caller` header (and fails after its write with
// `x-fail`): two requests with one key make one payment and a byte-identical replay; a request
// whose handler fails after its write keeps nothing.
import { IdempotentClient } from 'nestjs-pg-idempotency/client';
import { createRequire } from 'node:module';

export async function payTwiceAndFailOnce(
  base: string,
  caller: string,
  count: (caller: string) => Promise<number>,
): Promise<Record<string, boolean>> {
  const client = new IdempotentClient({ maxAttempts: 1 });
  const first = await client.fetch(`${base}/payments`, { method: 'POST', headers: { 'x-caller': caller } });
  const again = await client.fetch(`${base}/payments`, {
    method: 'POST',
    headers: { 'x-caller': caller },
    idempotencyKey: first.key,
  });
  const failed = await client.fetch(`${base}/payments`, {
    method: 'POST',
    headers: { 'x-caller': `${caller}-failed`, 'x-fail': '1' },
  });
  const [firstBody, againBody] = [await first.response.text(), await again.response.text()];
  return {
    replayed: first.response.status === 201 && !first.replayed && again.replayed && firstBody === againBody,
    onePayment: (await count(caller)) === 1,
    failedKeptNothing: failed.response.status === 500 && (await count(`${caller}-failed`)) === 0,
  };
}

/** Whether `typeorm` resolves from the app (`from`: its `import.meta.url`): the apps on a pool must run without it. */
export function resolvesTypeorm(from: string): boolean {
  try {
    createRequire(from).resolve('typeorm');
    return true;
  } catch {
    return false;
  }
}
