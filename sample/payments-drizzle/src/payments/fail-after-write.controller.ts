import { Body, Controller, Headers, InternalServerErrorException, Post, Req, UseGuards } from '@nestjs/common';
import { Idempotent } from 'nestjs-pg-idempotency';
import { BearerAuthGuard } from '../auth/bearer-auth.guard.js';
import { CreatePaymentDto } from './create-payment.dto.js';
import { PaymentsService } from './payments.service.js';

/**
 * POST /payments/fail-after-write pays as POST /payments does, then fails while the request carries
 * `X-Fail: after-write`, as a handler that crashes once its service wrote: the check proves the
 * payment is rolled back with the key and the key stays free, so the retry runs.
 */
@Controller('payments/fail-after-write')
@UseGuards(BearerAuthGuard)
export class FailAfterWriteController {
  constructor(private readonly payments: PaymentsService) {}

  @Post()
  @Idempotent()
  async create(
    @Body() dto: CreatePaymentDto,
    @Req() request: { user: { id: string } },
    @Headers('x-fail') fail?: string,
  ) {
    const payment = await this.payments.pay(request.user.id, dto);
    if (fail === 'after-write') throw new InternalServerErrorException('failed after its write');
    return payment;
  }
}
