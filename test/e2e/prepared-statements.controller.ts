import { Controller, Headers, Post, Req, UseGuards } from '@nestjs/common';
import { IdempotencyTransaction, Idempotent } from '../../src/index.js';
import { type AuthenticatedRequest, BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
import type { Payment } from '../../src/demo/payments/payment.entity.js';
import { writePayment } from '../support/common-routes.controller.js';

/**
 * A handler that writes, then drops every prepared statement of its connection's server session
 * (`DEALLOCATE ALL`), as a session that changed under the connection would have none: the
 * module's statement that records the outcome is then gone when the transaction commits.
 */
@Controller('prepared-statements')
@UseGuards(BearerAuthGuard)
export class PreparedStatementsController {
  constructor(private readonly tx: IdempotencyTransaction) {}

  @Post('deallocated')
  @Idempotent()
  async deallocated(
    @Req() request: AuthenticatedRequest,
    @Headers('x-deallocate') deallocate?: string,
  ): Promise<Payment> {
    const payment = await writePayment(this.tx, request);
    if (deallocate === '1') await this.tx.manager.query('DEALLOCATE ALL');
    return payment;
  }
}
