import { Body, Controller, Post, Req, UseGuards } from '@nestjs/common';
import { Idempotent } from 'nestjs-pg-idempotency';
import { BearerAuthGuard } from '../auth/bearer-auth.guard.js';
import { CreatePaymentDto } from './create-payment.dto.js';
import { PaymentsService } from './payments.service.js';

@Controller('payments')
@UseGuards(BearerAuthGuard) // sets request.user: the key's caller
export class PaymentsController {
  constructor(private readonly payments: PaymentsService) {}

  @Post()
  @Idempotent()
  create(@Body() dto: CreatePaymentDto, @Req() request: { user: { id: string } }) {
    return this.payments.pay(request.user.id, dto);
  }
}
