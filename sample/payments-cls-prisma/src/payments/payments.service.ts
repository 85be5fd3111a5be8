import { Injectable } from '@nestjs/common';
import { Transactional, TransactionHost } from '@nestjs-cls/transactional';
import type { IdempotentTransactionalAdapterPrisma } from 'nestjs-pg-idempotency/cls';
import type { PrismaClient } from '../generated/prisma/client.js';
import type { CreatePaymentDto } from './create-payment.dto.js';

@Injectable()
export class PaymentsService {
  // The adapter's client type is your PrismaClient: txHost.tx has your models.
  constructor(private readonly txHost: TransactionHost<IdempotentTransactionalAdapterPrisma<PrismaClient>>) {}

  @Transactional()
  async pay(caller: string, dto: CreatePaymentDto) {
    // Inside an @Idempotent() request txHost.tx is the key's client: both rows commit with the key.
    const payment = await this.txHost.tx.payment.create({ data: { ...dto, caller } });
    await this.txHost.tx.ledgerEntry.create({ data: { paymentId: payment.id, amount: dto.amount } });
    return payment;
  }
}
