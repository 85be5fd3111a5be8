import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CardProcessor } from './card-processor.js';
import { Refund } from './refund.entity.js';
import { RefundsController } from './refunds.controller.js';

@Module({
  imports: [TypeOrmModule.forFeature([Refund])], // autoLoadEntities registers the entities named here
  controllers: [RefundsController],
  providers: [CardProcessor],
})
export class RefundsModule {}
