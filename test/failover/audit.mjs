// What a failover did, read from the clients' answers and the new primary's tables: every number
// the suite reports per scenario.
import pg from 'pg';

/** What the clients saw: requests, statuses, and how long no write succeeded after the failover. */
export function answersReport({ operations, attempts }, failoverAt) {
  const firstSuccessAfter = attempts
    .filter((attempt) => attempt.at >= failoverAt && attempt.status === 201)
    .map((attempt) => attempt.at)
    .sort((a, b) => a - b)[0];
  const statuses = {};
  for (const attempt of attempts) statuses[attempt.status] = (statuses[attempt.status] ?? 0) + 1;
  return {
    operations: operations.length,
    requests: attempts.length,
    succeeded: operations.filter((operation) => operation.status === 201).length,
    statuses,
    '503 without Retry-After': attempts.filter((attempt) => attempt.status === 503 && !attempt.retryAfter).length,
    'seconds of unavailability': firstSuccessAfter === undefined ? undefined : (firstSuccessAfter - failoverAt) / 1000,
    'operations never answered 2xx': operations.filter((operation) => operation.status !== 201).length,
  };
}

/** What no scenario may show in the clients' answers. */
export function brokenAnswers(report) {
  const broken = [];
  if ((report.statuses[500] ?? 0) > 0) broken.push('a 500');
  if (report['503 without Retry-After'] > 0) broken.push('a 503 without Retry-After');
  if (report['operations never answered 2xx'] > 0) broken.push('an operation that never succeeded');
  if (report['seconds of unavailability'] === undefined) broken.push('no success after the failover');
  return broken;
}

/**
 * What the payments scenarios may not show: a payment apart from its key, a lost outcome replayed
 * from a cache, and, `strict` (no acknowledged commit may be lost), a key run twice or a 2xx lost.
 */
export function brokenPayments(report, { strict }) {
  const broken = brokenAnswers(report);
  if (report['payments without keys'] > 0) broken.push('a payment without its key');
  if (report['keys without payments'] > 0) broken.push('a key without its payment');
  if (strict && report['keys executed twice'] > 0) broken.push('a key executed twice');
  if (report['lost 2xx replayed from an instance replay cache'] > 0)
    broken.push('a lost outcome replayed from a cache');
  if (strict && report['2xx whose payment is gone'] > 0) broken.push('an acknowledged payment lost');
  return broken;
}

/** The payments scenarios: one payment per operation, its caller the operation's own. */
export async function audit(primaryUrl, seen, failoverAt) {
  const client = new pg.Client({ connectionString: primaryUrl });
  await client.connect();
  try {
    const payments = new Map(
      (
        await client.query(`SELECT caller, count(*)::int AS n FROM payments WHERE caller LIKE 'fo-%' GROUP BY caller`)
      ).rows.map((row) => [row.caller, row.n]),
    );
    const keys = new Map(
      (
        await client.query(
          `SELECT caller, state, status FROM idempotency_keys WHERE caller LIKE 'fo-%' AND endpoint LIKE 'POST %payments'`,
        )
      ).rows.map((row) => [row.caller, row]),
    );
    const succeeded = seen.operations.filter((operation) => operation.status === 201);
    const completedKeyCallers = [...keys]
      .filter(([, row]) => row.state === 'completed' && row.status === 201)
      .map(([caller]) => caller);
    const doubled = [...payments].filter(([, n]) => n > 1).map(([caller]) => caller);
    return {
      ...answersReport(seen, failoverAt),
      ...(doubled.length > 0 && { 'the keys executed twice': await twice(client, doubled, seen.operations) }),
      'keys executed twice': doubled.length,
      'payments without keys': [...payments.keys()].filter((caller) => keys.get(caller)?.state !== 'completed').length,
      'keys without payments': completedKeyCallers.filter((caller) => !payments.has(caller)).length,
      '2xx whose payment is gone': succeeded.filter((operation) => !payments.has(operation.caller)).length,
      lost: succeeded.filter((operation) => !payments.has(operation.caller)),
    };
  } finally {
    await client.end();
  }
}

/** What the table and the clients tell of each caller whose key ran twice: its rows and its operation. */
async function twice(client, callers, operations) {
  const rows = async (text) => (await client.query(text, [callers])).rows;
  const payments = await rows(`SELECT caller, id, created_at FROM payments WHERE caller = ANY($1) ORDER BY created_at`);
  const keys = await rows(
    `SELECT caller, key, state, status, created_at FROM idempotency_keys WHERE caller = ANY($1) ORDER BY created_at`,
  );
  return callers.map((caller) => ({
    payments: payments.filter((row) => row.caller === caller),
    keys: keys.filter((row) => row.caller === caller),
    operation: operations.find((operation) => operation.caller === caller),
  }));
}
