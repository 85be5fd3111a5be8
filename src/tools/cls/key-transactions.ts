import { Propagation, type TransactionalAdapter, type TransactionHost } from '@nestjs-cls/transactional';
import type { HandlerSavepoint } from '../../hosts/database-host.js';
import { handlerSavepoint, keepHandlerSavepoint, markSavepoint } from './key-savepoints.js';
import {
  NewTransactionInKeyError,
  TransactionalIsolationError,
  TransactionSuspendedInKeyError,
} from './transactional.errors.js';

/** How one tool (TypeORM, Prisma) starts its transactions, and what its key transaction is. */
export interface ToolTransactions<Tx, Options> {
  /** The tool's handle on the key's transaction the calling code runs in, while that is open. */
  keyTx(): Tx | undefined;
  /** The tool's handle outside any transaction (the upstream adapter's fallback). */
  fallback(): Tx;
  /** A transaction of its own, as the upstream adapter starts it (outside an @Idempotent() request). */
  begin(options: Options | undefined, run: (tx: Tx) => Promise<unknown>): Promise<unknown>;
  /** A transaction nested in `tx` (a savepoint), as the upstream adapter starts it. */
  nested(tx: Tx, options: Options | undefined, run: (tx: Tx) => Promise<unknown>): Promise<unknown>;
  /** The isolation level `options` asks for, if any: refused inside an @Idempotent() request. */
  isolationOf(options: Options | undefined): string | undefined;
}

/** The key's transaction being entered as the host's transaction, carried in the options of that one call. */
const ENTERING = Symbol('nestjs-pg-idempotency:entering-key');

interface Entering<Tx> {
  tx: Tx;
  savepoint: HandlerSavepoint;
}

type EnteringOptions<Tx> = { [ENTERING]?: Entering<Tx> };

/**
 * Starts the handler with `host`'s transaction set to the key's (`entering.tx`), until `settled`:
 * `Propagation.RequiresNew` always reaches `wrapWithTransaction`, whatever the app opened before,
 * and the key's transaction rides in the options of that call alone.
 */
export function enterKeyTransaction<T, Tx>(
  host: TransactionHost<any>,
  entering: Entering<Tx>,
  start: () => T,
  settled: Promise<void>,
): T {
  let started!: T;
  const options: EnteringOptions<Tx> = { [ENTERING]: entering };
  void host.withTransaction(Propagation.RequiresNew, options as never, () => {
    started = start();
    return settled;
  });
  return started;
}

/**
 * The adapter's options for `tool`: outside an `@Idempotent()` request exactly what the upstream
 * adapter does; inside one, a nested transaction is a savepoint of the key's transaction (the
 * handler's own savepoint when nothing ran since it was set: no SAVEPOINT sent), and a
 * transaction of its own, a suspended one or an isolation level fails with an error that says why.
 */
export function keyAwareTransactions<Tx, Options>(
  tool: ToolTransactions<Tx, Options>,
): ReturnType<TransactionalAdapter<unknown, Tx, Options>['optionsFactory']> {
  return {
    wrapWithTransaction: async (options, fn, setTx) => {
      const entering = (options as EnteringOptions<Tx> | undefined)?.[ENTERING];
      if (entering) {
        setTx(entering.tx);
        keepHandlerSavepoint(entering.savepoint);
        return fn();
      }
      if (tool.keyTx() !== undefined) throw new NewTransactionInKeyError();
      return tool.begin(options, (tx) => {
        setTx(tx);
        return fn();
      });
    },
    wrapWithNestedTransaction: async (options, fn, setTx, tx) => {
      const key = tool.keyTx();
      const isolation = key === undefined ? undefined : tool.isolationOf(options);
      if (isolation !== undefined) throw new TransactionalIsolationError(isolation);
      const taken = key !== undefined && tx === key ? handlerSavepoint()?.take() : undefined;
      if (!taken) {
        return tool.nested(tx, options, (inner) => {
          setTx(inner);
          markSavepoint();
          return fn();
        });
      }
      setTx(tx);
      markSavepoint();
      let result: unknown;
      try {
        result = await fn();
      } catch (error) {
        await taken.rollback().catch(() => undefined);
        throw error;
      }
      taken.release();
      return result;
    },
    getFallbackInstance: () => {
      if (tool.keyTx() !== undefined) throw new TransactionSuspendedInKeyError();
      return tool.fallback();
    },
  };
}
