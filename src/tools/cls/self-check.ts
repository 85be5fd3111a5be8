import { Propagation, type TransactionHost } from '@nestjs-cls/transactional';
import { ClsServiceManager } from 'nestjs-cls';
import { IdempotencyConfigurationError, IdempotencyError } from '../../idempotency.errors.js';
import { scopeKey } from '../../key/scoped-key.js';
import { executionContext } from '../../hosts/execution-context.js';
import type { DatabaseHost } from '../../hosts/database-host.js';
import { packageVersion } from '../../hosts/package-version.js';
import { NewTransactionInKeyError } from './transactional.errors.js';

/** A transaction-local setting: what a savepoint's rollback undoes, with no table to write. */
const MARK = (value: string) => `SELECT set_config('nestjs_pg_idempotency.self_check', '${value}', true) AS value`;
const MARKED = `SELECT current_setting('nestjs_pg_idempotency.self_check', true) AS value`;

/** The scope the check's key transaction runs under (nothing of it is written). */
const CHECK_SCOPE = scopeKey('self-check', '', 'CHECK @nestjs-cls/transactional');

/** How the check reaches one tool's key transaction (TypeORM, Prisma). */
export interface CheckedTool<Tx> {
  /** The tool's handle on the key's transaction, inside it. */
  keyTx(): Tx | undefined;
  /** Runs `sql` (one row, one `value` column) through the tool's handle `tx`. */
  value(tx: Tx, sql: string): Promise<string | null>;
}

/**
 * Checks, on a real key transaction of `database` rolled back at the end, what the adapter
 * promises inside an `@Idempotent()` request: `txHost.tx` is the tool's handle on the key's
 * transaction; a failing `Propagation.Required` transaction rolls back its own writes and keeps
 * the key transaction's, both when it takes the handler's savepoint and when it sets one of its
 * own; a `Required` one inside it joins it; `RequiresNew` is refused. Throws an
 * `IdempotencyConfigurationError` naming the `@nestjs-cls/transactional` version and what failed,
 * so that the app does not start.
 */
export async function checkKeyTransactions<Tx>(
  txHost: TransactionHost<any>,
  database: DatabaseHost,
  tool: CheckedTool<Tx>,
): Promise<void> {
  const { transaction } = await database.begin([], []);
  let settle!: () => void;
  const settled = new Promise<void>((resolve) => (settle = resolve));
  let wrong: string | undefined;
  try {
    const handle = transaction.handle;
    wrong = await ClsServiceManager.getClsService().run(() =>
      executionContext.run({ scope: CHECK_SCOPE, handle }, () =>
        transaction.enterHandler(() => probe(txHost, tool), settled),
      ),
    );
  } finally {
    settle();
    await transaction.end('rollback');
  }
  if (wrong === undefined) return;
  throw new IdempotencyConfigurationError(
    `@nestjs-cls/transactional ${packageVersion('@nestjs-cls/transactional') ?? 'of an unknown version'}: ${wrong}, so writes through ` +
      "TransactionHost could escape the key's transaction or its savepoints. This adapter is tested with @nestjs-cls/transactional 3.3; " +
      "until it supports this version, write through the module's own handle (IdempotencyTransaction, IdempotentPrisma), or use lease mode (@Idempotent({ mode: 'lease' }))",
  );
}

/** What is not as promised, or `undefined` when everything is. */
async function probe<Tx>(txHost: TransactionHost<any>, tool: CheckedTool<Tx>): Promise<string | undefined> {
  const key = tool.keyTx();
  if (key === undefined || txHost.tx !== key)
    return "txHost.tx inside an @Idempotent() request is not the key's transaction";
  const failure = new IdempotencyError('the check fails this transaction on purpose');
  const current = () => txHost.tx as Tx;
  const marked = () => tool.value(key, MARKED);
  let joined: string | null | undefined;
  // First, nothing ran since the handler's savepoint: the transaction takes it, where the host has one to give.
  const required = txHost.withTransaction(async () => {
    await tool.value(current(), MARK('required'));
    await txHost
      .withTransaction(async () => {
        await tool.value(current(), MARK('joined'));
        throw failure;
      })
      .catch(passOn(failure));
    joined = await tool.value(current(), MARKED);
    throw failure;
  });
  await required.catch(passOn(failure));
  if (joined !== 'joined') return 'a Propagation.Required transaction inside another did not join it';
  if (((await marked()) ?? '') !== '')
    return "a failing Propagation.Required transaction that began the handler's work kept its writes";
  // Then after a write of the key transaction's: a savepoint of its own.
  await tool.value(key, MARK('key'));
  await txHost
    .withTransaction(async () => {
      await tool.value(current(), MARK('required'));
      throw failure;
    })
    .catch(passOn(failure));
  const after = await marked();
  if (after !== 'key')
    return `a failing Propagation.Required transaction inside an @Idempotent() request ${after === 'required' ? 'kept its writes' : "undid the key transaction's"}`;
  const refused = await txHost
    .withTransaction(Propagation.RequiresNew, async () => undefined)
    .then(
      () => false,
      (error: unknown) => error instanceof NewTransactionInKeyError,
    );
  if (!refused) return 'a Propagation.RequiresNew transaction inside an @Idempotent() request was not refused';
  return undefined;
}

/** A catch handler that swallows `expected` and rethrows anything else. */
function passOn(expected: Error): (error: unknown) => void {
  return (error) => {
    if (error !== expected) throw error;
  };
}
