import { Body, Controller, Post, Req, UseGuards } from '@nestjs/common';
import { Idempotent, IdempotencyTransaction } from 'nestjs-pg-idempotency';
import { createHash } from 'node:crypto';
import { BearerAuthGuard } from '../auth/bearer-auth.guard.js';
import { Payment } from './payment.entity.js';

// #region controller
export class CreatePaymentDto {
  amount: number;
  currency: string;
  card: { number: string; cvc: string };
}

@Controller('payments')
@UseGuards(BearerAuthGuard)
export class PaymentsController {
  constructor(private readonly tx: IdempotencyTransaction) {}

  /** Charges the card; its token goes back to this client once, and is never stored with the key's outcome. */
  @Post()
  @Idempotent({ redact: { body: ['card.token'] } })
  async create(@Body() { amount, currency, card }: CreatePaymentDto, @Req() request: { user: { id: string } }) {
    const cardLast4 = card.number.slice(-4);
    const payment = await this.tx.getRepository(Payment).save({ caller: request.user.id, amount, currency, cardLast4 });
    const token = `tok_${createHash('sha256').update(card.number).digest('hex').slice(0, 24)}`;
    return { ...payment, card: { last4: cardLast4, token } };
  }
}
// #endregion controller
