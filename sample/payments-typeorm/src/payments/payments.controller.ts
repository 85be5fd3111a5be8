// #region controller
import { Body, Controller, Post, Req, UseGuards } from '@nestjs/common';
import { ApiCreatedResponse } from '@nestjs/swagger';
import { Idempotent, IdempotencyTransaction } from 'nestjs-pg-idempotency';
import { ApiIdempotent } from 'nestjs-pg-idempotency/swagger';
import { BearerAuthGuard } from '../auth/bearer-auth.guard.js';
import { CreatePaymentDto } from './create-payment.dto.js';
import { Payment } from './payment.entity.js';

@Controller('payments')
@UseGuards(BearerAuthGuard) // sets request.user: the key's caller
export class PaymentsController {
  constructor(private readonly tx: IdempotencyTransaction) {}

  @Post()
  @Idempotent() // route options: ttl, required, fingerprint, mode, ...
  // #region openapi
  @ApiIdempotent() // optional with createIdempotentDocument(); @ApiIdempotent({ required: false }) overrides
  @ApiCreatedResponse({ type: Payment })
  // #endregion openapi
  create(@Body() dto: CreatePaymentDto, @Req() request: { user: { id: string } }) {
    // This repository works in the transaction that reserved the key: the row and the key commit together.
    return this.tx.getRepository(Payment).save({ ...dto, caller: request.user.id });
  }
}
// #endregion controller
