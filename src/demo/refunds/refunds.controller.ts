import {
  Body,
  Controller,
  Get,
  NotFoundException,
  Param,
  ParseUUIDPipe,
  Post,
  Req,
  UnprocessableEntityException,
  UseGuards,
} from '@nestjs/common';
import { Idempotent } from '../../bootstrap/idempotent.decorator.js';
import { IdempotencyTransaction } from '../../tools/typeorm/idempotency-transaction.js';
import { type AuthenticatedRequest, BearerAuthGuard } from '../http/bearer-auth.guard.js';
import { Payment } from '../payments/payment.entity.js';
import { CreateRefundDto } from './create-refund.dto.js';
import { Refund } from './refund.entity.js';
import { SimulatedPaymentProvider } from './simulated-payment-provider.js';

@Controller('payments/:paymentId/refunds')
@UseGuards(BearerAuthGuard)
export class RefundsController {
  constructor(
    private readonly tx: IdempotencyTransaction,
    private readonly provider: SimulatedPaymentProvider,
  ) {}

  /**
   * Lease mode: the refund is an effect at the provider, which no database transaction can
   * undo. The provider gets a key derived from ours, so a retry that takes over after a crash
   * does not refund twice; the refund row is keyed by the provider's id, so it is recorded once.
   */
  @Post()
  @Idempotent({ mode: 'lease' })
  async create(
    @Param('paymentId', ParseUUIDPipe) paymentId: string,
    @Body() dto: CreateRefundDto,
    @Req() request: AuthenticatedRequest,
  ): Promise<Refund> {
    const payment = await this.findPayment(paymentId, request);
    if (dto.amount > payment.amount) {
      throw new UnprocessableEntityException(`a refund cannot exceed the payment's amount (${payment.amount})`);
    }
    const effect = await this.provider.refund({
      idempotencyKey: this.tx.downstreamKey('refund'),
      paymentId,
      amount: dto.amount,
    });
    const refunds = this.tx.getRepository(Refund);
    await refunds
      .createQueryBuilder()
      .insert()
      .values({ paymentId, amount: dto.amount, providerRefundId: effect.id })
      .orIgnore()
      .execute();
    return refunds.findOneByOrFail({ providerRefundId: effect.id });
  }

  @Get()
  async list(
    @Param('paymentId', ParseUUIDPipe) paymentId: string,
    @Req() request: AuthenticatedRequest,
  ): Promise<Refund[]> {
    await this.findPayment(paymentId, request);
    return this.tx.getRepository(Refund).find({ where: { paymentId }, order: { createdAt: 'ASC' } });
  }

  private async findPayment(id: string, request: AuthenticatedRequest): Promise<Payment> {
    const payment = await this.tx.getRepository(Payment).findOneBy({ id, caller: request.user.id });
    if (!payment) throw new NotFoundException(`no payment ${id} for this caller`);
    return payment;
  }
}
