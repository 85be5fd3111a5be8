import { Injectable } from '@nestjs/common';
import { Transactional, TransactionHost } from '@nestjs-cls/transactional';
import type { IdempotentTransactionalAdapterTypeOrm } from '../../tools/cls/index.js';
import { Payment } from '../payments/payment.entity.js';

/** Writes payments through `TransactionHost`, in a `@Transactional()` method of its own. */
@Injectable()
export class PaymentLedger {
  constructor(private readonly txHost: TransactionHost<IdempotentTransactionalAdapterTypeOrm>) {}

  @Transactional()
  async record(caller: string, amount: number, currency: string): Promise<string> {
    const payments = this.txHost.tx.getRepository(Payment);
    const saved = await payments.save(payments.create({ caller, amount, currency }));
    return saved.id;
  }

  list(caller: string): Promise<Payment[]> {
    return this.txHost.tx.getRepository(Payment).find({ where: { caller }, order: { createdAt: 'ASC' } });
  }
}
