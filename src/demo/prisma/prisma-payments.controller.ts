import { Body, Controller, Get, HttpException, HttpStatus, Inject, Post, Req, UseGuards } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { IdempotentPrisma } from '../../tools/prisma/index.js';
import { Idempotent } from '../../bootstrap/idempotent.decorator.js';
import { DEMO_CONFIG, type DemoConfig } from '../demo.config.js';
import { type AuthenticatedRequest, BearerAuthGuard } from '../http/bearer-auth.guard.js';
import { CreatePaymentDto } from '../payments/create-payment.dto.js';
import { DECLINED_FROM_AMOUNT } from '../payments/payments.controller.js';
import type { PrismaClient } from './generated/client.js';

/** The fields a payment answers with, as on the other hosts (the caller stays private). */
export const PAYMENT_FIELDS = { id: true, amount: true, currency: true, createdAt: true } as const;

/** The demo's payments routes on Prisma (`DEMO_TX=prisma`): the same HTTP contract, two models written per payment. */
@Controller('payments')
@UseGuards(BearerAuthGuard)
export class PrismaPaymentsController {
  constructor(
    private readonly prisma: IdempotentPrisma<PrismaClient>,
    @Inject(DEMO_CONFIG) private readonly config: DemoConfig,
  ) {}

  /** Charges once per Idempotency-Key: the payment and its ledger entry commit together with the key. */
  @Post()
  @Idempotent()
  async create(@Body() dto: CreatePaymentDto, @Req() request: AuthenticatedRequest) {
    const client = this.prisma.client;
    const payment = await client.payment.create({ data: { ...dto, caller: request.user.id }, select: PAYMENT_FIELDS });
    await client.ledgerEntry.create({ data: { paymentId: payment.id, amount: dto.amount } });
    if (this.config.latencyMs > 0) await sleep(this.config.latencyMs);
    if (dto.amount >= DECLINED_FROM_AMOUNT)
      throw new HttpException('the card was declined', HttpStatus.PAYMENT_REQUIRED);
    return payment;
  }

  @Get()
  list(@Req() request: AuthenticatedRequest) {
    return this.prisma.client.payment.findMany({
      where: { caller: request.user.id },
      orderBy: { createdAt: 'asc' },
      select: PAYMENT_FIELDS,
    });
  }
}
