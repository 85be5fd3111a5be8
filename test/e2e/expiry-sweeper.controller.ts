import { Controller, Post, Req, UseGuards } from '@nestjs/common';
import { IdempotencyTransaction, Idempotent } from '../../src/index.js';
import { type AuthenticatedRequest, BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
import { Payment } from '../../src/demo/payments/payment.entity.js';
import { writePayment } from '../support/common-routes.controller.js';

/** A route whose keys expire after 1 s (route option `ttl`). */
@Controller('lab')
@UseGuards(BearerAuthGuard)
export class ExpiryController {
  constructor(private readonly tx: IdempotencyTransaction) {}

  @Post('short-ttl')
  @Idempotent({ ttl: '1s' })
  async shortTtl(@Req() request: AuthenticatedRequest): Promise<Payment> {
    return writePayment(this.tx, request);
  }
}
