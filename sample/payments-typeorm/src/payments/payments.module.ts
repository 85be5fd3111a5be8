import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Payment } from './payment.entity';
import { PaymentsController } from './payments.controller';

@Module({
  imports: [TypeOrmModule.forFeature([Payment])], // autoLoadEntities registers the entities named here
  controllers: [PaymentsController],
})
export class PaymentsModule {}
