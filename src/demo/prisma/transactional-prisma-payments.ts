import {
  Body,
  Controller,
  Get,
  HttpException,
  HttpStatus,
  Inject,
  Injectable,
  Post,
  Req,
  UseGuards,
} from '@nestjs/common';
import { Transactional, TransactionHost } from '@nestjs-cls/transactional';
import { setTimeout as sleep } from 'node:timers/promises';
import type { IdempotentTransactionalAdapterPrisma } from '../../tools/cls/index.js';
import { Idempotent } from '../../bootstrap/idempotent.decorator.js';
import { DEMO_CONFIG, type DemoConfig } from '../demo.config.js';
import { type AuthenticatedRequest, BearerAuthGuard } from '../http/bearer-auth.guard.js';
import { CreatePaymentDto } from '../payments/create-payment.dto.js';
import { DECLINED_FROM_AMOUNT } from '../payments/payments.controller.js';
import type { PrismaClient } from './generated/client.js';
import { PAYMENT_FIELDS } from './prisma-payments.controller.js';

/** The payment as a `@Transactional()` service on Prisma, reached through `TransactionHost` (`DEMO_TX=cls-prisma`). */
@Injectable()
export class TransactionalPrismaPayments {
  constructor(
    private readonly txHost: TransactionHost<IdempotentTransactionalAdapterPrisma<PrismaClient>>,
    @Inject(DEMO_CONFIG) private readonly config: DemoConfig,
  ) {}

  @Transactional()
  async pay(caller: string, dto: CreatePaymentDto) {
    const payment = await this.txHost.tx.payment.create({ data: { ...dto, caller }, select: PAYMENT_FIELDS });
    await this.txHost.tx.ledgerEntry.create({ data: { paymentId: payment.id, amount: dto.amount } });
    if (this.config.latencyMs > 0) await sleep(this.config.latencyMs);
    if (dto.amount >= DECLINED_FROM_AMOUNT)
      throw new HttpException('the card was declined', HttpStatus.PAYMENT_REQUIRED);
    return payment;
  }

  list(caller: string) {
    return this.txHost.tx.payment.findMany({
      where: { caller },
      orderBy: { createdAt: 'asc' },
      select: PAYMENT_FIELDS,
    });
  }
}

/** The demo's payments routes on `@nestjs-cls/transactional` over Prisma: the same HTTP contract. */
@Controller('payments')
@UseGuards(BearerAuthGuard)
export class TransactionalPrismaPaymentsController {
  constructor(private readonly payments: TransactionalPrismaPayments) {}

  @Post()
  @Idempotent()
  create(@Body() dto: CreatePaymentDto, @Req() request: AuthenticatedRequest) {
    return this.payments.pay(request.user.id, dto);
  }

  @Get()
  list(@Req() request: AuthenticatedRequest) {
    return this.payments.list(request.user.id);
  }
}
