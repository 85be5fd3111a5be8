import { Injectable } from '@nestjs/common';
import { Transactional, TransactionHost } from '@nestjs-cls/transactional';
import type { IdempotentTransactionalAdapterTypeOrm } from 'nestjs-pg-idempotency/cls';
import type { CreatePaymentDto } from './create-payment.dto.js';
import { Payment } from './payment.entity.js';

@Injectable()
export class PaymentsService {
  constructor(private readonly txHost: TransactionHost<IdempotentTransactionalAdapterTypeOrm>) {}

  @Transactional()
  pay(caller: string, dto: CreatePaymentDto): Promise<Payment> {
    // Inside an @Idempotent() request txHost.tx is the key's EntityManager: the row commits with the key.
    return this.txHost.tx.getRepository(Payment).save({ ...dto, caller });
  }
}
