import { Controller, Patch, Post, Req, UseGuards } from '@nestjs/common';
import { IdempotencyTransaction, Idempotent } from '../../src/index.js';
import { type AuthenticatedRequest, BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
import { Payment } from '../../src/demo/payments/payment.entity.js';
import { writePayment } from '../support/common-routes.controller.js';

/** LabController's `lab/scoped` under another method, and a wildcard route for any path below `lab/deep/`. */
@Controller('lab')
@UseGuards(BearerAuthGuard)
export class ScopeController {
  constructor(private readonly tx: IdempotencyTransaction) {}

  @Patch('scoped')
  @Idempotent()
  patchScoped(@Req() request: AuthenticatedRequest): Promise<Payment> {
    return writePayment(this.tx, request);
  }

  /** Any path below /lab/deep/ (a wildcard, so no router parameter-length limit applies). */
  @Post('deep/*')
  @Idempotent()
  deep(@Req() request: AuthenticatedRequest): Promise<Payment> {
    return writePayment(this.tx, request);
  }
}

/** The same route under another version prefix. */
@Controller('v2/lab')
@UseGuards(BearerAuthGuard)
export class LabV2Controller {
  constructor(private readonly tx: IdempotencyTransaction) {}

  @Post('scoped')
  @Idempotent()
  scoped(@Req() request: AuthenticatedRequest): Promise<Payment> {
    return writePayment(this.tx, request);
  }
}
