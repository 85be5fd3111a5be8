import { Body, Controller, HttpException, HttpStatus, Post, Req, UseGuards } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Idempotent } from '../../src/index.js';
import { type AuthenticatedRequest, BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
import { DECLINED_FROM_AMOUNT } from '../../src/demo/payments/payments.controller.js';
import { Payment } from '../../src/demo/payments/payment.entity.js';

/**
 * The demo's payment route, broken as an app that forgot the key's transaction breaks it: the
 * payment is written through the app's own DataSource, so it commits on its own, and stays when
 * the card is declined after it.
 */
@Controller('outside-the-key')
@UseGuards(BearerAuthGuard)
export class OutsideTheKeyController {
  constructor(private readonly dataSource: DataSource) {}

  @Post('payments')
  @Idempotent()
  async create(
    @Body() dto: { amount: number; currency: string },
    @Req() request: AuthenticatedRequest,
  ): Promise<Payment> {
    const payments = this.dataSource.getRepository(Payment);
    const saved = await payments.save(payments.create({ ...dto, caller: request.user.id }));
    if (dto.amount >= DECLINED_FROM_AMOUNT)
      throw new HttpException('the card was declined', HttpStatus.PAYMENT_REQUIRED);
    return saved;
  }
}
