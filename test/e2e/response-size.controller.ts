import { Body, Controller, Headers, Post, Req, UseGuards } from '@nestjs/common';
import { IdempotencyTransaction, Idempotent } from '../../src/index.js';
import { type AuthenticatedRequest, BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
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

/** A lease-mode route whose answer is over its 64-byte limit; counts its runs per key. */
@Controller('size')
@UseGuards(BearerAuthGuard)
export class SizeController {
  private readonly runs = new Map<string, number>();

  @Post('lease')
  @Idempotent({ mode: 'lease', maxResponseBytes: 64 })
  lease(@Headers('idempotency-key') key: string): object {
    const run = (this.runs.get(key) ?? 0) + 1;
    this.runs.set(key, run);
    return { run, data: 'x'.repeat(100) };
  }
}
