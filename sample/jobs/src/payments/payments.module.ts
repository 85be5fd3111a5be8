// #region payments-module
import { BullModule } from '@nestjs/bullmq';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Payment } from './payment.entity.js';
import { PaymentsProcessor } from './payments.processor.js';
import { PAYMENTS_QUEUE } from './payments.queue.js';

@Module({
  imports: [BullModule.registerQueue({ name: PAYMENTS_QUEUE }), TypeOrmModule.forFeature([Payment])],
  providers: [PaymentsProcessor],
})
export class PaymentsModule {}
// #endregion payments-module
