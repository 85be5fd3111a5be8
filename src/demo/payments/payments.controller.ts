import { Body, Controller, Get, HttpException, HttpStatus, Inject, Post, Req, UseGuards } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { Idempotent } from '../../bootstrap/idempotent.decorator.js';
import { IdempotencyTransaction } from '../../tools/typeorm/idempotency-transaction.js';
import { type AuthenticatedRequest, BearerAuthGuard } from '../http/bearer-auth.guard.js';
import { DEMO_CONFIG, type DemoConfig } from '../demo.config.js';
import { CreatePaymentDto } from './create-payment.dto.js';
import { Payment } from './payment.entity.js';

/**
 * The simulated card network declines amounts from this one up (402), once the payment attempt
 * was written: the write rolls back, and the decline is recorded and replayed like any answer.
 */
export const DECLINED_FROM_AMOUNT = 1_000_000;

@Controller('payments')
@UseGuards(BearerAuthGuard)
export class PaymentsController {
  constructor(
    private readonly tx: IdempotencyTransaction,
    @Inject(DEMO_CONFIG) private readonly config: DemoConfig,
  ) {}

  /** Charges once per Idempotency-Key; the insert commits together with the key. */
  @Post()
  @Idempotent()
  async create(@Body() dto: CreatePaymentDto, @Req() request: AuthenticatedRequest): Promise<Payment> {
    const payments = this.tx.getRepository(Payment);
    const saved = await payments.save(payments.create({ ...dto, caller: request.user.id }));
    if (this.config.latencyMs > 0) await sleep(this.config.latencyMs);
    if (dto.amount >= DECLINED_FROM_AMOUNT)
      throw new HttpException('the card was declined', HttpStatus.PAYMENT_REQUIRED);
    return payments.findOneByOrFail({ id: saved.id });
  }

  @Get()
  list(@Req() request: AuthenticatedRequest): Promise<Payment[]> {
    return this.tx.getRepository(Payment).find({ where: { caller: request.user.id }, order: { createdAt: 'ASC' } });
  }
}
