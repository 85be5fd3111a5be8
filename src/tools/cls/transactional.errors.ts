import { IdempotencyConfigurationError } from '../../idempotency.errors.js';

/**
 * A transaction of its own (`Propagation.RequiresNew`, or a transaction started inside
 * `Propagation.NotSupported`) inside an `@Idempotent()` request: it would commit on its own,
 * outside the key's transaction, so a retry of the request could run its writes again.
 */
export class NewTransactionInKeyError extends IdempotencyConfigurationError {
  constructor() {
    super(
      'a new transaction (Propagation.RequiresNew, or one started inside Propagation.NotSupported) inside an @Idempotent() request ' +
        "would commit outside the key's transaction, and a retry could run its writes again; use the default Propagation.Required " +
        "(a savepoint of the key's transaction) or Propagation.Nested, or move this work to a lease-mode route",
    );
  }
}

/**
 * `txHost.tx` reached inside `Propagation.NotSupported` within an `@Idempotent()` request: its
 * writes would commit outside the key's transaction.
 */
export class TransactionSuspendedInKeyError extends IdempotencyConfigurationError {
  constructor() {
    super(
      "txHost.tx inside Propagation.NotSupported (or after the transaction was suspended) within an @Idempotent() request: its writes would commit outside the key's transaction, " +
        'and a retry could run them again; use the default propagation, or move this work to a lease-mode route',
    );
  }
}

/** An isolation level asked for inside an `@Idempotent()` request, whose transaction runs at READ COMMITTED. */
export class TransactionalIsolationError extends IdempotencyConfigurationError {
  constructor(isolationLevel: string) {
    super(
      `a transaction at ${isolationLevel} inside an @Idempotent() request: it runs inside the key's transaction, which is READ COMMITTED ` +
        "(the key's lookup needs it); remove the isolation level (from defaultTxOptions too) and lock the rows a decision reads (SELECT … FOR UPDATE)",
    );
  }
}
