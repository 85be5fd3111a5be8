import { Body, Controller, Post, Req, UseGuards } from '@nestjs/common';
import { Idempotent, IdempotencyTransaction } from '../../src/index.js';
import { BearerAuthGuard, type AuthenticatedRequest } from '../../src/demo/http/bearer-auth.guard.js';
import { writePayment } from '../support/common-routes.controller.js';

/** Routes that write, then answer with a body of about the size asked for. */
@Controller('lab')
@UseGuards(BearerAuthGuard)
export class ResponseSizeController {
  constructor(private readonly tx: IdempotencyTransaction) {}

  /** Writes, then answers with a body of about `size` bytes; stores up to 4 KiB. */
  @Post('large')
  @Idempotent({ maxResponseBytes: 4096 })
  large(@Req() request: AuthenticatedRequest, @Body() body: { size: number }): Promise<object> {
    return this.sized(request, body.size);
  }

  /** The same under the module's maxResponseBytes. */
  @Post('large-default')
  @Idempotent()
  largeDefault(@Req() request: AuthenticatedRequest, @Body() body: { size: number }): Promise<object> {
    return this.sized(request, body.size);
  }

  private async sized(request: AuthenticatedRequest, size: number): Promise<object> {
    const payment = await writePayment(this.tx, request);
    return { paymentId: payment.id, data: 'x'.repeat(Math.max(0, size - 70)) };
  }
}
