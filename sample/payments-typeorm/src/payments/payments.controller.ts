import { Body, Controller, Post, Req, UseGuards } from '@nestjs/common';
import { Idempotent, IdempotencyTransaction } from 'nestjs-pg-idempotency';
import { BearerAuthGuard } from '../auth/bearer-auth.guard';
import { CreatePaymentDto } from './create-payment.dto';
import { Payment } from './payment.entity';

// #region controller
@Controller('payments')
@UseGuards(BearerAuthGuard) // sets request.user: the key's caller
export class PaymentsController {
  constructor(private readonly tx: IdempotencyTransaction) {}

  @Post()
  @Idempotent() // route options: ttl, required, fingerprint, mode, ...
  create(@Body() dto: CreatePaymentDto, @Req() request: { user: { id: string } }) {
    // This repository works in the transaction that reserved the key: the row and the key commit together.
    return this.tx.getRepository(Payment).save({ ...dto, caller: request.user.id });
  }
}
// #endregion controller
