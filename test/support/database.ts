import pg from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { databaseUrl } from './apps.js';

let pool: pg.Pool | undefined;

/** Runs SQL on the test database, outside any app (to look at what a user would see). */
export async function sql<Row = any>(text: string, params: unknown[] = []): Promise<Row[]> {
  pool ??= new pg.Pool({ connectionString: databaseUrl(), max: 4 });
  return (await pool.query(text, params)).rows as Row[];
}

export async function closeSql(): Promise<void> {
  await pool?.end();
  pool = undefined;
}

/** How many payments (business writes) a caller has. */
export async function paymentCount(caller: string): Promise<number> {
  const [row] = await sql<{ n: string }>('SELECT count(*) AS n FROM payments WHERE caller = $1', [caller]);
  return Number(row.n);
}

/** The caller's rows in idempotency_keys. */
export function keyRows(caller: string): Promise<Array<{ key: string; endpoint: string; state: string; status: number | null }>> {
  return sql('SELECT key, endpoint, state, status FROM idempotency_keys WHERE caller = $1 ORDER BY created_at', [caller]);
}

/** Inserts `count` completed keys for `caller` that expire at now() + `offset` (negative: expired). */
export async function seedKeys(caller: string, count: number, offset: string): Promise<void> {
  await sql(
    `INSERT INTO idempotency_keys (key, caller, endpoint, fingerprint, state, status, response_body, expires_at)
     SELECT 'k' || i, $1, 'POST /seeded', '\\x00', 'completed', 201, '\\x7b7d', now() + $3::interval
     FROM generate_series(1, $2::int) AS i`,
    [caller, count, offset],
  );
}

/** Inserts a completed outcome of `key` for `caller` on `endpoint` that expired a minute ago. */
export async function seedExpiredOutcome(key: string, caller: string, endpoint: string): Promise<void> {
  await sql(
    `INSERT INTO idempotency_keys (key, caller, endpoint, fingerprint, state, status, response_body, expires_at)
     VALUES ($1, $2, $3, '\\x00', 'completed', 201, '\\x7b7d', now() - interval '1 minute')`,
    [key, caller, endpoint],
  );
}

/**
 * Polls `condition` every 10 ms until it holds; fails after 20 s, a bound meant to be reached only
 * when the condition never comes (a machine three times slower than usual needs a few seconds).
 */
export async function until(condition: () => Promise<boolean>, what = 'the condition'): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what} did not hold within 20 s`);
    await sleep(10);
  }
}

/**
 * The pid of the one key transaction that inserted a payment and now sits idle inside its handler
 * (a handler sleeping after its write), once there is one.
 */
export async function handlerBackend(): Promise<number> {
  let rows: Array<{ pid: number }> = [];
  await until(async () => {
    rows = await sql(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction' AND query LIKE 'INSERT INTO "payments"%'`,
    );
    return rows.length === 1;
  }, 'one handler transaction idle after its write');
  return rows[0].pid;
}
