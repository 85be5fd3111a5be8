import { Injectable } from '@nestjs/common';
import { IdempotentPrisma } from 'nestjs-pg-idempotency/prisma';
import type { PrismaClient } from '../generated/prisma/client.js';
import type { CreatePaymentDto } from './create-payment.dto.js';

@Injectable()
export class PaymentsService {
  constructor(private readonly prisma: IdempotentPrisma<PrismaClient>) {}

  async pay(caller: string, dto: CreatePaymentDto) {
    // Inside an @Idempotent() request prisma.client runs in the key's transaction: both rows commit with the key.
    const payment = await this.prisma.client.payment.create({ data: { ...dto, caller } });
    await this.prisma.client.ledgerEntry.create({ data: { paymentId: payment.id, amount: dto.amount } });
    return payment;
  }
}
