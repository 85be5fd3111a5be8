import { Controller, Post, Req, UseGuards } from '@nestjs/common';
import { IdempotencyTransaction, Idempotent } from '../../src/index.js';
import { type AuthenticatedRequest, BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
import { Payment } from '../../src/demo/payments/payment.entity.js';
import { writeAndRead, writePayment } from '../support/common-routes.controller.js';

/** LabController's `twin` without idempotency, for a baseline, and a handler with a nested transaction. */
@Controller('lab')
@UseGuards(BearerAuthGuard)
export class RoundTripsController {
  constructor(private readonly tx: IdempotencyTransaction) {}

  /** The baseline: the same write and read as `twin`, in a plain transaction, no idempotency. */
  @Post('plain')
  plain(@Req() request: AuthenticatedRequest): Promise<Payment> {
    return this.tx.manager.transaction((manager) => writeAndRead(manager, request));
  }

  /** A nested transaction that fails: only its own write is undone (a savepoint). */
  @Post('nested')
  @Idempotent()
  async nested(@Req() request: AuthenticatedRequest): Promise<object> {
    await writePayment(this.tx, request);
    const failed = await this.tx.manager
      .transaction(async (inner) => {
        await inner.save(inner.create(Payment, { caller: request.user.id, amount: 2, currency: 'EUR' }));
        throw new Error('inner failure');
      })
      .catch((error: Error) => error.message);
    return { failed };
  }
}
