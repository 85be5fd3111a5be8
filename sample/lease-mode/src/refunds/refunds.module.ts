import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CardProcessor } from './card-processor';
import { Refund } from './refund.entity';
import { RefundsController } from './refunds.controller';

@Module({
  imports: [TypeOrmModule.forFeature([Refund])], // autoLoadEntities registers the entities named here
  controllers: [RefundsController],
  providers: [CardProcessor],
})
export class RefundsModule {}
