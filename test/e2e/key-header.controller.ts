import { Controller, Headers, Post, Req, UseGuards } from '@nestjs/common';
import { IdempotencyTransaction, Idempotent } from '../../src/index.js';
import { type AuthenticatedRequest, BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
import { Payment } from '../../src/demo/payments/payment.entity.js';
import { writePayment } from '../support/common-routes.controller.js';

/** Routes with their own Idempotency-Key rules: a widened key format, an optional key. */
@Controller('lab')
@UseGuards(BearerAuthGuard)
export class KeyHeaderController {
  constructor(private readonly tx: IdempotencyTransaction) {}

  @Post('printable')
  @Idempotent({ keyFormat: 'printable-ascii' })
  printable(@Headers('idempotency-key') key: string): object {
    return { length: key.length };
  }

  @Post('optional')
  @Idempotent({ required: false })
  async optional(@Req() request: AuthenticatedRequest): Promise<Payment> {
    return writePayment(this.tx, request);
  }
}
