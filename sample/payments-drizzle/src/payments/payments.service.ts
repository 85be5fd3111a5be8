import { Injectable } from '@nestjs/common';
import { IdempotentDrizzle } from 'nestjs-pg-idempotency/drizzle';
import * as schema from '../database/schema.js';
import type { CreatePaymentDto } from './create-payment.dto.js';

@Injectable()
export class PaymentsService {
  constructor(private readonly drizzle: IdempotentDrizzle<typeof schema>) {}

  async pay(caller: string, dto: CreatePaymentDto) {
    // Inside an @Idempotent() request drizzle.db is bound to the key's transaction: the row commits with the key.
    const [payment] = await this.drizzle.db
      .insert(schema.payments)
      .values({ ...dto, caller })
      .returning();
    return payment;
  }
}
