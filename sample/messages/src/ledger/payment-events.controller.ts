// #region handler
import { Controller } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { IdempotencyTransaction, IdempotentMessage } from 'nestjs-pg-idempotency';
import { LedgerEntry } from './ledger-entry.entity.js';

export interface PaymentCreated {
  id: string;
  amount: number;
}

/** The event's pattern; on JetStream, its subject. SUBJECT_PREFIX (`staging.`) lets environments share a NATS server. */
export const PAYMENT_CREATED = `${process.env.SUBJECT_PREFIX ?? ''}payment.created`;

@Controller()
export class PaymentEvents {
  constructor(private readonly tx: IdempotencyTransaction) {} // or IdempotentDrizzle, IdempotentPrisma, TransactionHost

  @EventPattern<string>(PAYMENT_CREATED) // <string>: a pattern computed at startup, not a typed event's name
  @IdempotentMessage({ maxAttempts: 3 }) // the key: the broker's message id; a third failure is dead-lettered
  async created(@Payload() event: PaymentCreated): Promise<void> {
    // Written in the transaction that reserved the message's key: the entry and the key commit together.
    await this.tx.getRepository(LedgerEntry).insert({ paymentId: event.id, amount: event.amount });
  }
}
// #endregion handler
