import { Module } from '@nestjs/common';
import { FailAfterWriteController } from './fail-after-write.controller';
import { PaymentsController } from './payments.controller';
import { PaymentsService } from './payments.service';

@Module({
  controllers: [PaymentsController, FailAfterWriteController],
  providers: [PaymentsService],
})
export class PaymentsModule {}
