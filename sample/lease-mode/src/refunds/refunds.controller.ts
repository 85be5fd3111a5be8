// #region controller
import { Body, Controller, Param, ParseUUIDPipe, Post, UseGuards } from '@nestjs/common';
import { Idempotent, IdempotencyTransaction } from 'nestjs-pg-idempotency';
import { BearerAuthGuard } from '../auth/bearer-auth.guard.js';
import { CardProcessor } from './card-processor.js';
import { CreateRefundDto } from './create-refund.dto.js';
import { Refund } from './refund.entity.js';

@Controller('payments')
@UseGuards(BearerAuthGuard) // sets request.user: the key's caller
export class RefundsController {
  constructor(
    private readonly tx: IdempotencyTransaction,
    private readonly processor: CardProcessor,
  ) {}

  @Post(':paymentId/refunds')
  @Idempotent({ mode: 'lease', lease: '30s' }) // lease: how long a crashed holder keeps the key
  async refund(@Param('paymentId', ParseUUIDPipe) paymentId: string, @Body() dto: CreateRefundDto) {
    // 1. The processor de-duplicates by a key derived from ours: a retry never refunds twice.
    const refund = await this.processor.refund({ idempotencyKey: this.tx.downstreamKey('refund'), paymentId, ...dto });
    // 2. Recorded by the processor's id (UNIQUE, ON CONFLICT DO NOTHING): once, however often this runs.
    // In lease mode this repository is the DataSource's own: no transaction is held across the call.
    const refunds = this.tx.getRepository(Refund);
    await refunds
      .createQueryBuilder()
      .insert()
      .values({ paymentId, providerRefundId: refund.id, ...dto })
      .orIgnore()
      .execute();
    return refunds.findOneByOrFail({ providerRefundId: refund.id });
  }
}
// #endregion controller
