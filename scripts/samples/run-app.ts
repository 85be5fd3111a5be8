// Runs one sample that is a whole app: boots its AppModule on a free port, sends a keyed
// POST /payments twice and checks what a client sees: one payment row, the second answer the
// first one's bytes, marked as a replay. The caller is `alice`, as the app's authentication says.
//   node dist/run-app.js ./docs-prisma-7.js     (DATABASE_URL: a database with tables.sql applied)
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { NestFactory } from '@nestjs/core';
import { Pool } from 'pg';

const [sample] = process.argv.slice(2);
const { AppModule } = (await import(sample)) as { AppModule: new () => unknown };
const app = await NestFactory.create(AppModule, { logger: ['error', 'warn'] });
// An app without a guard of its own: its authentication stands here.
app.use((request: { user?: { id: string } }, _response: unknown, next: () => void) => {
  request.user ??= { id: 'alice' };
  next();
});
await app.listen(0, '127.0.0.1');
const amount = Math.floor(Math.random() * 1_000_000_000);
const key = randomUUID();
const url = await app.getUrl();
const send = () =>
  fetch(`${url}/payments`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key, authorization: 'Bearer alice' },
    body: JSON.stringify({ amount, currency: 'EUR' }),
  });
const first = await send();
const firstBody = await first.text();
const second = await send();
const secondBody = await second.text();
const pool = new Pool({ connectionString: process.env.DATABASE_URL });
const rows = (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM payments WHERE amount = $1', [amount]))
  .rows[0].n;
await pool.end();
const problems = [
  first.status >= 300 && `the first POST answered ${first.status}: ${firstBody}`,
  second.status !== first.status && `the retry answered ${second.status}: ${secondBody}`,
  second.headers.get('idempotent-replayed') !== 'true' && 'the retry is not marked Idempotent-Replayed: true',
  secondBody !== firstBody && `the retry's body differs: ${secondBody} / ${firstBody}`,
  rows !== 1 && `${rows} payment rows for one key`,
].filter(Boolean);
if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(1);
}
console.log(`${first.status}, then the replay; 1 payment row`);
// The sample's own pools stay open: the process ends here.
process.exit(0);
