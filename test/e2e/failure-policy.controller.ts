import {
  BadRequestException,
  Controller,
  Headers,
  HttpException,
  Param,
  Post,
  Req,
  Res,
  StreamableFile,
  UnprocessableEntityException,
  UseGuards,
} from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { IdempotencyTransaction, Idempotent } from '../../src/index.js';
import { type AuthenticatedRequest, BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
import { Payment } from '../../src/demo/payments/payment.entity.js';
import { AttemptCounter, writePayment } from '../support/common-routes.controller.js';
import { type SelfSender, sendItself } from '../support/platform-response.js';

/** Handlers that fail after writing, each in its own way (a `lab/…` route each). */
@Controller('lab')
@UseGuards(BearerAuthGuard)
export class FailurePolicyController {
  private readonly attempts = new AttemptCounter();

  constructor(private readonly tx: IdempotencyTransaction) {}

  @Post('fail-after-write')
  @Idempotent()
  async failAfterWrite(@Req() request: AuthenticatedRequest): Promise<never> {
    await writePayment(this.tx, request);
    throw new Error('the card processor is down');
  }

  /** Fails after writing with an upstream's 401 the way HTTP clients report it (an Error with a `status`). */
  @Post('upstream-refused')
  @Idempotent()
  async upstreamRefused(@Req() request: AuthenticatedRequest): Promise<never> {
    await writePayment(this.tx, request);
    throw Object.assign(new Error('Request failed with status code 401'), { status: 401, code: 'ERR_BAD_REQUEST' });
  }

  /** Fails after writing on the first attempt of a key, succeeds on the next. */
  @Post('flaky')
  @Idempotent()
  async flaky(@Req() request: AuthenticatedRequest, @Headers('idempotency-key') key: string): Promise<object> {
    const payment = await writePayment(this.tx, request);
    const attempt = this.attempts.next(key);
    if (attempt === 1) throw new Error('transient failure after the write');
    return { attempt, paymentId: payment.id };
  }

  @Post('reject-after-write')
  @Idempotent()
  async rejectAfterWrite(@Req() request: AuthenticatedRequest): Promise<never> {
    await writePayment(this.tx, request);
    throw new UnprocessableEntityException('insufficient funds');
  }

  /** A statement that fails (aborting the transaction), caught, then a thrown 400. */
  @Post('sql-error-then-400')
  @Idempotent()
  async sqlErrorThen400(@Req() request: AuthenticatedRequest): Promise<never> {
    await writePayment(this.tx, request);
    await this.tx.manager.query('SELECT 1/0').catch(() => undefined);
    throw new BadRequestException('bad input found by the database');
  }

  /** A 422 thrown inside a nested `manager.transaction()`, after writes inside and outside it. */
  @Post('nested-reject')
  @Idempotent()
  async nestedReject(@Req() request: AuthenticatedRequest): Promise<never> {
    await writePayment(this.tx, request);
    await this.tx.manager.transaction(async (inner) => {
      await inner.save(inner.create(Payment, { caller: request.user.id, amount: 2, currency: 'EUR' }));
      throw new UnprocessableEntityException('declined inside');
    });
    throw new Error('unreachable');
  }

  /** Like LabController's status/:code (writes, then throws that status), on a route whose own policy stores only answers below 400. */
  @Post('status-below-400-stored/:code')
  @Idempotent({ storeResponse: (status) => status < 400 })
  async statusBelow400Stored(@Req() request: AuthenticatedRequest, @Param('code') code: string): Promise<never> {
    await writePayment(this.tx, request);
    throw new HttpException({ failed: Number(code) }, Number(code));
  }

  /** Writes, sends 201 itself, then a later step fails (a plain error: its writes roll back). */
  @Post('self-sent-then-fail')
  @Idempotent()
  async selfSentThenFail(
    @Req() request: AuthenticatedRequest,
    @Res({ passthrough: true }) response: SelfSender,
  ): Promise<void> {
    const payment = await writePayment(this.tx, request);
    sendItself(response, 201, payment);
    await sleep(20);
    throw new Error('a later step of the handler failed');
  }

  @Post('file')
  @Idempotent()
  async file(@Req() request: AuthenticatedRequest): Promise<StreamableFile> {
    await writePayment(this.tx, request);
    return new StreamableFile(Buffer.from('not replayable'));
  }
}
