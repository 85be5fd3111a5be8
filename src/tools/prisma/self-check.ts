import { IdempotencyConfigurationError, IdempotencyError } from '../../idempotency.errors.js';
import { scopeKey } from '../../key/scoped-key.js';
import type { DatabaseHost } from '../../hosts/database-host.js';
import { executionContext } from '../../hosts/execution-context.js';
import { packageVersion } from '../../hosts/package-version.js';
import { isKeyClient, type KeyClient } from '../../hosts/pg/key-client.js';

/** What the module uses of a Prisma client (a `PrismaClient`, extended or not). */
export interface PrismaClientLike {
  $queryRawUnsafe(query: string, ...values: any[]): PromiseLike<any>;
  $executeRawUnsafe(query: string, ...values: any[]): PromiseLike<number>;
  $transaction(...args: any[]): PromiseLike<any>;
  $disconnect(): Promise<void>;
}

/** The Prisma lines the host is tested with; a client or adapter of another is refused. */
const TESTED_MAJOR = 7;

/** A transaction-local setting: what a savepoint's rollback undoes, with no table to write. */
const MARK = (value: string) => `SELECT set_config('nestjs_pg_idempotency.self_check', '${value}', true)`;
const MARKED = `SELECT current_setting('nestjs_pg_idempotency.self_check', true) AS value`;
const WHERE = `SELECT pg_backend_pid() AS pid, txid_current()::text AS tx`;

const CHECK_SCOPE = scopeKey('self-check', '', 'CHECK prisma');

/**
 * Checks, before the app serves requests, what `IdempotentPrisma` promises: `@prisma/client`
 * and `@prisma/adapter-pg` of the tested line; then, on a real key transaction rolled back at the
 * end, that a query of the key's client runs on the key's connection in the key's transaction,
 * that a failing interactive `$transaction()` undoes its own statements and keeps the key's, and
 * that a batch `$transaction([...])` runs in the key's transaction. Throws an
 * `IdempotencyConfigurationError` naming the versions and what failed, so that the app does not
 * start.
 */
export async function checkPrisma(
  host: DatabaseHost,
  clientOn: (keyClient: KeyClient) => PrismaClientLike,
): Promise<void> {
  const versions = `@prisma/client ${packageVersion('@prisma/client') ?? '(not found)'}, @prisma/adapter-pg ${packageVersion('@prisma/adapter-pg') ?? '(not found)'}`;
  const refuse = (wrong: string) =>
    new IdempotencyConfigurationError(
      `${versions}: ${wrong}, so Prisma's writes could commit outside the key's transaction. IdempotentPrisma is tested with Prisma ${TESTED_MAJOR}; ` +
        "on another version, use lease mode (@Idempotent({ mode: 'lease' })) with the app's own PrismaClient",
    );
  for (const name of ['@prisma/client', '@prisma/adapter-pg']) {
    const version = packageVersion(name);
    if (version !== undefined && Number(version.split('.')[0]) !== TESTED_MAJOR)
      throw refuse(`${name} is not of the tested line`);
  }
  const { transaction } = await host.begin([], []);
  let wrong: string | undefined;
  try {
    const keyClient = transaction.handle;
    if (!isKeyClient(keyClient)) throw refuse("the module's host is not the node-postgres pool (the pool option)");
    wrong = await executionContext.run({ scope: CHECK_SCOPE, handle: keyClient }, () =>
      probe(keyClient, clientOn(keyClient)),
    );
  } catch (error) {
    if (error instanceof IdempotencyConfigurationError) throw error;
    wrong = `the check's queries failed (${(error as Error)?.message ?? String(error)})`;
  } finally {
    await transaction.end('rollback');
  }
  if (wrong !== undefined) throw refuse(wrong);
}

/** What is not as promised, or `undefined` when everything is. */
async function probe(keyClient: KeyClient, client: PrismaClientLike): Promise<string | undefined> {
  const onKey = async (sql: string) => ((await keyClient.query(sql)) as { rows: Record<string, unknown>[] }).rows[0];
  const key = await onKey(WHERE);
  const [found] = (await client.$queryRawUnsafe(WHERE)) as Record<string, unknown>[];
  if (found?.pid !== key.pid) return "a query of the key's Prisma client ran on another connection than the key's";
  if (found?.tx !== key.tx) return "a query of the key's Prisma client ran outside the key's transaction";
  await client.$executeRawUnsafe(MARK('key'));
  const failure = new IdempotencyError('the check fails this transaction on purpose');
  await Promise.resolve(
    client.$transaction(async (tx: PrismaClientLike) => {
      await tx.$executeRawUnsafe(MARK('interactive'));
      throw failure;
    }),
  ).then(
    () => undefined,
    (error: unknown) => {
      if (error !== failure) throw error;
    },
  );
  const after = (await onKey(MARKED)).value;
  if (after !== 'key')
    return `a failing interactive $transaction() ${after === 'interactive' ? 'kept its statements' : "undid the key transaction's"}`;
  const [batched] = (await client.$transaction([client.$queryRawUnsafe(WHERE)])) as [Record<string, unknown>[]];
  if (batched?.[0]?.tx !== key.tx)
    return "a batch $transaction([...]) of the key's Prisma client ran outside the key's transaction";
  return undefined;
}
