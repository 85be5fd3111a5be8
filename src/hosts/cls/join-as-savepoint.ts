import { Logger } from '@nestjs/common';
import { Propagation, type TransactionHost } from '@nestjs-cls/transactional';
import { ClsServiceManager } from 'nestjs-cls';
import { keyManager } from './key-manager.js';

const JOINED = Symbol.for('nestjs-pg-idempotency.joins-as-savepoint');

/**
 * Set in the CLS store of a savepoint of the key's transaction (TypeORM hands a savepoint the
 * key's own EntityManager, so the manager cannot tell the calls inside that they are not the
 * outermost).
 */
const IN_SAVEPOINT = Symbol.for('nestjs-pg-idempotency.in-savepoint');

/** Marks the CLS store of the savepoint being entered (called inside it). */
export function markSavepoint(): void {
  ClsServiceManager.getClsService().set(IN_SAVEPOINT, true);
}

type WithTransaction = TransactionHost['withTransaction'] & { [JOINED]?: true };

/**
 * Makes a `Propagation.Required` transaction inside an @Idempotent() request (the default of
 * `@Transactional()` and `txHost.withTransaction()`) a savepoint of the key's transaction,
 * `Propagation.Nested`, so that its writes are undone when it throws, as they would be in a
 * transaction of its own. Inside it, a `Required` call joins that savepoint, as it joins any
 * transaction (the savepoint's CLS store is marked, `markSavepoint()`). It wraps this host's
 * public `withTransaction()` (its documented arguments: `[propagation], [options], fn`); a host
 * without one keeps the upstream behaviour (`Required` joins the key's transaction without a
 * savepoint), and says so once.
 */
export function joinAsSavepoint(host: TransactionHost): void {
  const own = host.withTransaction as WithTransaction;
  if (typeof own !== 'function') {
    new Logger('Idempotency').warn(
      "TransactionHost has no withTransaction(): @Transactional() inside an @Idempotent() request joins the key's transaction without a savepoint",
    );
    return;
  }
  if (own[JOINED]) return;
  const joined = function (this: TransactionHost, ...args: unknown[]) {
    const key = keyManager();
    if (key !== undefined) {
      // As withTransaction() reads them: (fn), (propagation | options, fn), (propagation, options, fn),
      // where `@Transactional()` passes undefined for what it was not given.
      const fn = args[args.length - 1];
      const propagation = (args.length === 3 || (args.length === 2 && typeof args[0] === 'string') ? args[0] : undefined) ?? Propagation.Required;
      const options = args.length === 3 ? args[1] : args.length === 2 && typeof args[0] !== 'string' ? args[0] : undefined;
      if (propagation === Propagation.Required && currentTx(host) === key && !ClsServiceManager.getClsService().get(IN_SAVEPOINT)) {
        return (own as (...a: unknown[]) => unknown).call(this, Propagation.Nested, options ?? {}, fn);
      }
    }
    return (own as (...a: unknown[]) => unknown).apply(this, args);
  } as WithTransaction;
  joined[JOINED] = true;
  host.withTransaction = joined;
}

/** The host's current transaction, or `undefined` where reaching it fails (a suspended one). */
function currentTx(host: TransactionHost): unknown {
  try {
    return host.tx;
  } catch {
    return undefined;
  }
}
