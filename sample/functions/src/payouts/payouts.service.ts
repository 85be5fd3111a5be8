// #region service
import { Injectable } from '@nestjs/common';
import { IdempotencyService, IdempotencyTransaction } from 'nestjs-pg-idempotency';

/** The account cannot pay: a decision, recorded, so that the same payout id is refused again, not run. */
export class PayoutRefusedError extends Error {
  name = 'PayoutRefusedError';
}

@Injectable()
export class Payouts {
  constructor(
    private readonly idempotency: IdempotencyService,
    private readonly tx: IdempotencyTransaction,
  ) {}

  /** Pays `amount` from `account` once per payout id, whoever asks; resolves to what `run()` came to. */
  pay(payoutId: string, account: string, amount: number) {
    return this.idempotency.run(
      {
        scope: 'payout',
        key: payoutId,
        caller: account,
        payload: { amount }, // the payout id with another amount: `mismatch`
        recordFailure: (error) => error instanceof PayoutRefusedError, // any other failure frees the key
      },
      async () => {
        // In the key's transaction: the debit and the payout commit with the key, or not at all.
        // (TypeORM answers an UPDATE with [rows, count].)
        const [[debited]] = await this.tx.manager.query(
          'UPDATE accounts SET balance = balance - $2 WHERE id = $1 RETURNING balance',
          [account, amount],
        );
        if (!debited || debited.balance < 0) throw new PayoutRefusedError(`account ${account} cannot pay ${amount}`);
        const [payout] = await this.tx.manager.query(
          'INSERT INTO payouts (payout_id, account, amount) VALUES ($1, $2, $3) RETURNING id, amount',
          [payoutId, account, amount],
        );
        return payout as { id: string; amount: number };
      },
    );
  }
}
// #endregion service
