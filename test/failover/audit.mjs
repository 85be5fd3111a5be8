// What a failover did, read from the clients' answers and the new primary's tables: every number
// the suite reports per scenario.
import pg from 'pg';

export async function audit(primaryUrl, { operations, attempts }, failoverAt) {
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
    const succeeded = operations.filter((operation) => operation.status === 201);
    const after = attempts.filter((attempt) => attempt.at >= failoverAt);
    const firstSuccessAfter = after
      .filter((attempt) => attempt.status === 201)
      .map((attempt) => attempt.at)
      .sort((a, b) => a - b)[0];
    const statuses = {};
    for (const attempt of attempts) statuses[attempt.status] = (statuses[attempt.status] ?? 0) + 1;
    const completedKeyCallers = [...keys]
      .filter(([, row]) => row.state === 'completed' && row.status === 201)
      .map(([caller]) => caller);
    return {
      operations: operations.length,
      requests: attempts.length,
      succeeded: succeeded.length,
      statuses,
      '503 without Retry-After': attempts.filter((attempt) => attempt.status === 503 && !attempt.retryAfter).length,
      'seconds of unavailability':
        firstSuccessAfter === undefined ? undefined : (firstSuccessAfter - failoverAt) / 1000,
      'keys executed twice': [...payments.values()].filter((n) => n > 1).length,
      'payments without keys': [...payments.keys()].filter((caller) => keys.get(caller)?.state !== 'completed').length,
      'keys without payments': completedKeyCallers.filter((caller) => !payments.has(caller)).length,
      '2xx whose payment is gone': succeeded.filter((operation) => !payments.has(operation.caller)).length,
      lost: succeeded.filter((operation) => !payments.has(operation.caller)),
      'operations never answered 2xx': operations.length - succeeded.length,
    };
  } finally {
    await client.end();
  }
}
