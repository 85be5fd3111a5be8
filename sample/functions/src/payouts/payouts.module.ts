import { Module } from '@nestjs/common';
import { PayoutsController } from './payouts.controller.js';
import { Payouts } from './payouts.service.js';

@Module({
  controllers: [PayoutsController],
  providers: [Payouts],
  exports: [Payouts],
})
export class PayoutsModule {}
