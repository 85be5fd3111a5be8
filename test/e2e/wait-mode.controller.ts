import { Controller, Post, Req, UseGuards } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { IdempotencyTransaction, Idempotent } from '../../src/index.js';
import { type AuthenticatedRequest, BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
import { Payment } from '../../src/demo/payments/payment.entity.js';
import { writePayment } from '../support/common-routes.controller.js';
import { hold } from '../support/latch.js';

/** Routes whose duplicates wait for the first request (route option `wait`). */
@Controller('lab')
@UseGuards(BearerAuthGuard)
export class WaitModeController {
  constructor(private readonly tx: IdempotencyTransaction) {}

  /** Wait mode: duplicates wait up to 3 s for the first (600 ms of work) instead of a 409. */
  @Post('waiting')
  @Idempotent({ wait: '3s' })
  async waiting(@Req() request: AuthenticatedRequest): Promise<Payment> {
    const payment = await writePayment(this.tx, request);
    await sleep(600);
    return payment;
  }

  /** The same wait, the first held after its write until the test releases the caller's latch. */
  @Post('waiting-held')
  @Idempotent({ wait: '3s' })
  async waitingHeld(@Req() request: AuthenticatedRequest): Promise<Payment> {
    const payment = await writePayment(this.tx, request);
    await hold(request.user.id);
    return payment;
  }

  /**
   * Wait mode with a bound shorter than the handler, held until the test releases the caller's
   * latch: duplicates still get 409.
   */
  @Post('waiting-briefly')
  @Idempotent({ wait: '100ms' })
  async waitingBriefly(@Req() request: AuthenticatedRequest): Promise<Payment> {
    const payment = await writePayment(this.tx, request);
    await hold(request.user.id);
    return payment;
  }

  /**
   * Wait mode in lease mode (20 s lease), held until the test releases the caller's latch: past
   * the wait, the 409 tells the seconds left on the lease.
   */
  @Post('waiting-lease')
  @Idempotent({ mode: 'lease', lease: '20s', wait: '300ms' })
  async waitingLease(@Req() request: AuthenticatedRequest): Promise<object> {
    await hold(request.user.id);
    return { done: true };
  }
}
