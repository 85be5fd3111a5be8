// A sample app's message consumers, as main.ts samples import them: `import { LedgerModule } from './ledger.module.js'`.
import { Controller, Module } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IdempotencyModule, IdempotencyTransaction, IdempotentMessage } from 'nestjs-pg-idempotency';

@Controller()
export class PaymentEvents {
  constructor(private readonly tx: IdempotencyTransaction) {}

  @EventPattern('payment.created')
  @IdempotentMessage()
  created(@Payload() event: { id: string; amount: number }) {
    return this.tx.manager.query('INSERT INTO ledger_entries (payment_id, amount) VALUES ($1, $2)', [
      event.id,
      event.amount,
    ]);
  }
}

@Module({
  imports: [TypeOrmModule.forRoot({ type: 'postgres', url: process.env.DATABASE_URL }), IdempotencyModule.forRoot()],
  controllers: [PaymentEvents],
})
export class LedgerModule {}
