// The conformance kit as a team calls it from its test runner, from the built package: the demo's
// POST /payments at DEMO_URL, its rows counted in DATABASE_URL. testing-kit.node-test.mjs and
// testing-kit.vitest.test.mjs run it under node:test and Vitest (testing-kit.spec.ts runs those).
import pg from 'pg';
import { checkIdempotentRoute } from '../../dist/esm/testing/index.js';

export async function checkTheDemosPayments() {
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2 });
  const as = (run) => ({ authorization: `Bearer ${run}` });
  try {
    await checkIdempotentRoute({
      url: `${process.env.DEMO_URL}/payments`,
      request: (run) => ({ headers: as(run), body: { amount: 1250, currency: 'EUR' } }),
      otherPayload: (run) => ({ headers: as(run), body: { amount: 1, currency: 'EUR' } }),
      failing: (run) => ({ headers: as(run), body: { amount: 1_000_000, currency: 'EUR' } }),
      effects: async (run) =>
        (await pool.query('SELECT count(*)::int AS n FROM payments WHERE caller = $1', [run])).rows[0].n,
    });
  } finally {
    await pool.end();
  }
}
