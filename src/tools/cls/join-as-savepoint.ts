import { Propagation, type TransactionHost } from '@nestjs-cls/transactional';
import { inSavepoint } from './key-savepoints.js';

const JOINED = Symbol.for('nestjs-pg-idempotency.joins-as-savepoint');

type WithTransaction = TransactionHost['withTransaction'] & { [JOINED]?: true };

/**
 * Makes a `Propagation.Required` transaction inside an @Idempotent() request (`keyTx()`, the tool's
 * handle on the key's transaction, is there; the default of
 * `@Transactional()` and `txHost.withTransaction()`) a savepoint of the key's transaction,
 * `Propagation.Nested`, so that its writes are undone when it throws, as they would be in a
 * transaction of its own. Inside it, a `Required` call joins that savepoint, as it joins any
 * transaction (the savepoint's CLS store is marked, `markSavepoint()`). It wraps this host's
 * public `withTransaction()` (its documented arguments: `[propagation], [options], fn`): the
 * adapter's startup check (`self-check.ts`) proves by behaviour that it took.
 */
export function joinAsSavepoint(host: TransactionHost, keyTx: () => unknown): void {
  const own = host.withTransaction as WithTransaction;
  if (typeof own !== 'function' || own[JOINED]) return;
  const joined = function (this: TransactionHost, ...args: unknown[]) {
    const key = keyTx();
    if (key !== undefined) {
      // As withTransaction() reads them: (fn), (propagation | options, fn), (propagation, options, fn),
      // where `@Transactional()` passes undefined for what it was not given.
      const fn = args[args.length - 1];
      const propagation =
        (args.length === 3 || (args.length === 2 && typeof args[0] === 'string') ? args[0] : undefined) ??
        Propagation.Required;
      const options =
        args.length === 3 ? args[1] : args.length === 2 && typeof args[0] !== 'string' ? args[0] : undefined;
      if (propagation === Propagation.Required && currentTx(host) === key && !inSavepoint()) {
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
