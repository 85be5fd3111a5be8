// A client of this API that retries safely: `npm run client` (API_URL, API_TOKEN), after `npm run build`.
// #region client
import { IdempotentClient } from 'nestjs-pg-idempotency/client';

async function pay(): Promise<void> {
  const client = new IdempotentClient({ maxAttempts: 5, baseDelayMs: 100, maxDelayMs: 10_000 });
  const { response, replayed, key, attempts } = await client.fetch(`${process.env.API_URL}/payments`, {
    method: 'POST',
    headers: { authorization: `Bearer ${process.env.API_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ amount: 1250, currency: 'EUR' }),
  });
  console.log(JSON.stringify({ status: response.status, body: await response.json(), replayed, key, attempts }));
}

void pay();
// #endregion client
