// A sample app's module, as main.ts samples import it: `import { AppModule } from './app.module.js'`.
import { Body, Controller, Module, Post } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Idempotent, IdempotencyModule, IdempotencyTransaction } from 'nestjs-pg-idempotency';
import { CreatePaymentDto } from './create-payment.dto.js';
import { Payment } from './payment.entity.js';

@Controller('payments')
export class PaymentsController {
  constructor(private readonly tx: IdempotencyTransaction) {}

  @Post()
  @Idempotent()
  create(@Body() dto: CreatePaymentDto) {
    return this.tx.getRepository(Payment).save(dto);
  }
}

@Module({
  imports: [
    TypeOrmModule.forRoot({ type: 'postgres', url: process.env.DATABASE_URL, entities: [Payment] }),
    IdempotencyModule.forRoot(),
  ],
  controllers: [PaymentsController],
})
export class AppModule {}
