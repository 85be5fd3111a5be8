// #region module
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { LedgerEntry } from './ledger-entry.entity.js';
import { PaymentEvents } from './payment-events.controller.js';
import { RefundsConsumer } from './refunds.consumer.js';

@Module({
  imports: [TypeOrmModule.forFeature([LedgerEntry])],
  controllers: [PaymentEvents], // its @EventPattern() handlers, fed by the app's microservice
  providers: [RefundsConsumer],
})
export class LedgerModule {}
// #endregion module
