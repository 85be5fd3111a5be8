// The conformance kit on this app's POST /payments, in node:test, with the built app started in
// the test's own process (so the kit can also make the key's commit fail once): `npm test` after
// `npm run build`, with DATABASE_URL set. The same call works in Jest or Vitest.
// #region kit
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';
import pg from 'pg';

const require = createRequire(import.meta.url);
const { NestFactory } = require('@nestjs/core');
const { ValidationPipe } = require('@nestjs/common');
const { checkIdempotentRoute } = require('nestjs-pg-idempotency/testing');
const { AppModule } = require('../dist/app.module.js');

let app;
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2 });
before(async () => {
  app = await NestFactory.create(AppModule, { logger: ['error'] });
  app.useGlobalPipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true }));
  await app.listen(0, '127.0.0.1');
});
after(async () => {
  await app.close();
  await pool.end();
});

test('POST /payments keeps every promise of an idempotent route', async () => {
  // Each check runs under a run id of its own: here, the bearer token, so the payments' caller.
  const as = (run) => ({ authorization: `Bearer ${run}` });
  const report = await checkIdempotentRoute({
    url: `${await app.getUrl()}/payments`,
    request: (run) => ({ headers: as(run), body: { amount: 1250, currency: 'EUR' } }),
    otherPayload: (run) => ({ headers: as(run), body: { amount: 1, currency: 'EUR' } }),
    effects: async (run) =>
      (await pool.query('SELECT count(*)::int AS n FROM payments WHERE caller = $1', [run])).rows[0].n,
  });
  for (const check of report.checks) console.log(`${check.skipped ? 'skipped' : 'passed'}: ${check.name}`);
});
// #endregion kit
