import { Module } from '@nestjs/common';
import { FailAfterWriteController } from './fail-after-write.controller.js';
import { PaymentsController } from './payments.controller.js';
import { PaymentsService } from './payments.service.js';

@Module({
  controllers: [PaymentsController, FailAfterWriteController],
  providers: [PaymentsService],
})
export class PaymentsModule {}
