import { Body, Controller, Get, Post, Req, UseGuards } from '@nestjs/common';
import { Idempotent } from '../../bootstrap/idempotent.decorator.js';
import { type AuthenticatedRequest, BearerAuthGuard } from '../http/bearer-auth.guard.js';
import { CreatePaymentDto } from '../payments/create-payment.dto.js';
import type { Payment } from '../payments/payment.entity.js';
import { PaymentLedger } from './payment-ledger.service.js';
import { PaymentsService } from './payments.service.js';

/** The demo's payments routes (`DEMO_TX=cls`), the same HTTP contract, on `@nestjs-cls/transactional` services. */
@Controller('payments')
@UseGuards(BearerAuthGuard)
export class TransactionalPaymentsController {
  constructor(
    private readonly payments: PaymentsService,
    private readonly ledger: PaymentLedger,
  ) {}

  @Post()
  @Idempotent()
  create(@Body() dto: CreatePaymentDto, @Req() request: AuthenticatedRequest): Promise<Payment> {
    return this.payments.pay(request.user.id, dto);
  }

  @Get()
  list(@Req() request: AuthenticatedRequest): Promise<Payment[]> {
    return this.ledger.list(request.user.id);
  }
}
