#!/usr/bin/env node
import { parseArgs } from 'node:util';
import pg from 'pg';
import { KeyConsole, KeyConsoleInputError, KeyNotFoundError } from '../console/key-console.js';
import { type Duration, toMilliseconds } from '../../options/duration.js';
import type { KeyStorage } from '../../key/scoped-key.js';
import { countRows, inProgressRows, keyRows } from './key-output.js';
import { IdempotencyError } from '../../idempotency.errors.js';
import { migrate } from './migrate-command.js';

/** Exit codes: what went wrong, for scripts. */
const EXIT = { ok: 0, usage: 2, notFound: 3, database: 4 } as const;

const USAGE = `Usage: nestjs-pg-idempotency <command> [options]   (against DATABASE_URL)

Commands:
  migrate [--outbox] [--partitioned] [--sql FILE ...]
      creates the module's tables as the shipped migrations do (safe to re-run): idempotency_keys
      (--partitioned: partitioned by expiry), with --outbox idempotency_outbox; then runs your own
      SQL files; all in one transaction
  keys get --caller ID --key KEY [--endpoint 'POST /payments']
      a key's rows: state, status, age, expiry, fingerprint
  keys in-progress [--older-than 5m] [--limit 100]
      lease-mode keys in progress longer than that
  keys expire --caller ID --key KEY [--endpoint 'POST /payments']
      expire one key now: its next request runs
  keys count
      rows by state

Options:
  --json            print JSON instead of a table
  --digest          the table stores keys as digests (storage: { keys: 'digest' }); also IDEMPOTENCY_KEY_STORAGE=digest
  --database-url    instead of DATABASE_URL
`;

/** A command line the CLI cannot read: its usage is printed. */
class UsageError extends IdempotencyError {}

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        caller: { type: 'string' },
        key: { type: 'string' },
        endpoint: { type: 'string' },
        'older-than': { type: 'string', default: '0s' },
        limit: { type: 'string', default: '100' },
        json: { type: 'boolean', default: false },
        digest: { type: 'boolean', default: false },
        'database-url': { type: 'string' },
        outbox: { type: 'boolean', default: false },
        partitioned: { type: 'boolean', default: false },
        sql: { type: 'string', multiple: true, default: [] },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    return fail(EXIT.usage, `${(error as Error).message}\n\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  const [group, command] = positionals;
  if (values.help || group === undefined) {
    print(USAGE);
    return values.help ? EXIT.ok : EXIT.usage;
  }
  const migrating = group === 'migrate' && command === undefined;
  if (!migrating && (group !== 'keys' || !['get', 'in-progress', 'expire', 'count'].includes(command ?? ''))) {
    return fail(EXIT.usage, `unknown command: ${positionals.join(' ')}\n\n${USAGE}`);
  }
  const url = values['database-url'] ?? process.env.DATABASE_URL;
  if (!url)
    return fail(
      EXIT.usage,
      `no database: set DATABASE_URL (or pass --database-url) to the database that ${migrating ? 'is to hold' : 'holds'} idempotency_keys`,
    );
  const storage: KeyStorage = values.digest || process.env.IDEMPOTENCY_KEY_STORAGE === 'digest' ? 'digest' : 'clear';

  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    return fail(EXIT.database, `cannot reach the database at ${redacted(url)}: ${(error as Error).message}`);
  }
  if (migrating) {
    try {
      const lines = await migrate((text) => client.query(text), {
        outbox: values.outbox,
        partitioned: values.partitioned,
        files: values.sql,
      });
      print(lines.join('\n'));
      return EXIT.ok;
    } catch (error) {
      return fail(EXIT.database, `the migration failed, nothing was applied: ${(error as Error).message}`);
    } finally {
      await client.end().catch(() => undefined);
    }
  }
  try {
    const keys = new KeyConsole(async ([statement, params]) => {
      const result = await client.query(statement.text, params as unknown[]);
      return { rows: result.rows, rowCount: result.rowCount };
    }, storage);
    const json = values.json;
    switch (command) {
      case 'get': {
        const rows = await keys.lookup(keyQuery(values));
        if (rows.length === 0)
          return fail(
            EXIT.notFound,
            `no row for key ${JSON.stringify(values.key)} of caller ${JSON.stringify(values.caller)}${storage === 'clear' ? ' (a table with digested keys needs --digest)' : ''}`,
          );
        print(json ? JSON.stringify(rows, null, 2) : keyRows(rows));
        return EXIT.ok;
      }
      case 'in-progress': {
        const olderThan = duration(values['older-than']!);
        const limit = Number(values.limit);
        const rows = await keys.inProgress(olderThan, limit);
        print(
          json
            ? JSON.stringify(rows, null, 2)
            : rows.length
              ? inProgressRows(rows)
              : `no lease-mode key in progress for longer than ${values['older-than']}`,
        );
        return EXIT.ok;
      }
      case 'expire': {
        const row = await keys.expire(keyQuery(values));
        print(json ? JSON.stringify(row, null, 2) : `expired: the next request with this key runs\n${keyRows([row])}`);
        return EXIT.ok;
      }
      default: {
        const rows = await keys.counts();
        print(json ? JSON.stringify(rows, null, 2) : countRows(rows));
        return EXIT.ok;
      }
    }
  } catch (error) {
    if (error instanceof KeyNotFoundError) return fail(EXIT.notFound, error.message);
    if (error instanceof KeyConsoleInputError || error instanceof UsageError) return fail(EXIT.usage, error.message);
    const code = (error as { code?: string }).code;
    if (code === '42P01')
      return fail(
        EXIT.database,
        'the database has no idempotency_keys table: run `npx nestjs-pg-idempotency migrate` (docs/operations.md)',
      );
    return fail(EXIT.database, `the database failed: ${(error as Error).message}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}

function keyQuery(values: { caller?: string; key?: string; endpoint?: string }): {
  caller: string;
  key: string;
  endpoint?: string;
} {
  if (values.caller === undefined || values.key === undefined)
    throw new UsageError('name the key: --caller ID --key KEY');
  return { caller: values.caller, key: values.key, endpoint: values.endpoint };
}

function duration(text: string): number {
  try {
    return toMilliseconds(text as Duration, 'older-than');
  } catch {
    throw new UsageError(`--older-than takes a duration such as 30s, 5m or 2h, got ${JSON.stringify(text)}`);
  }
}

function redacted(url: string): string {
  return url.replace(/:[^:@/]+@/, ':***@');
}

function print(text: string): void {
  process.stdout.write(`${text}\n`);
}

function fail(code: number, message: string): number {
  process.stderr.write(`nestjs-pg-idempotency: ${message}\n`);
  return code;
}

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (error: Error) => {
    process.stderr.write(`nestjs-pg-idempotency: ${error.stack ?? error.message}\n`);
    process.exitCode = 1;
  },
);
