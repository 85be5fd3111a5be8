import { Module } from '@nestjs/common';
import { PayoutsController } from './payouts.controller';
import { Payouts } from './payouts.service';

@Module({
  controllers: [PayoutsController],
  providers: [Payouts],
  exports: [Payouts],
})
export class PayoutsModule {}
