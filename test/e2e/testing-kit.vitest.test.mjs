// The conformance kit as a team runs it under Vitest, from the built package: the demo's
// POST /payments at DEMO_URL, its rows counted in DATABASE_URL (testing-kit.spec.ts runs this).
import { test } from 'vitest';
import pg from 'pg';
import { checkIdempotentRoute } from '../../dist/esm/testing/index.js';

test("the demo's POST /payments keeps every promise", async () => {
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
}, 60_000);
