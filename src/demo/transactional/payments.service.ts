import { HttpException, HttpStatus, Inject, Injectable } from '@nestjs/common';
import { Transactional, TransactionHost } from '@nestjs-cls/transactional';
import { setTimeout as sleep } from 'node:timers/promises';
import type { IdempotentTransactionalAdapterTypeOrm } from '../../tools/cls/index.js';
import { DEMO_CONFIG, type DemoConfig } from '../demo.config.js';
import type { CreatePaymentDto } from '../payments/create-payment.dto.js';
import { Payment } from '../payments/payment.entity.js';
import { DECLINED_FROM_AMOUNT } from '../payments/payments.controller.js';
import { PaymentLedger } from './payment-ledger.service.js';

/**
 * The payment as a `@Transactional()` service method that calls another (`PaymentLedger`): the
 * business write is two services deep, reached through `TransactionHost`, as in an app built on
 * `@nestjs-cls/transactional`.
 */
@Injectable()
export class PaymentsService {
  constructor(
    private readonly txHost: TransactionHost<IdempotentTransactionalAdapterTypeOrm>,
    private readonly ledger: PaymentLedger,
    @Inject(DEMO_CONFIG) private readonly config: DemoConfig,
  ) {}

  @Transactional()
  async pay(caller: string, dto: CreatePaymentDto): Promise<Payment> {
    const id = await this.ledger.record(caller, dto.amount, dto.currency);
    if (this.config.latencyMs > 0) await sleep(this.config.latencyMs);
    if (dto.amount >= DECLINED_FROM_AMOUNT)
      throw new HttpException('the card was declined', HttpStatus.PAYMENT_REQUIRED);
    return this.txHost.tx.getRepository(Payment).findOneByOrFail({ id });
  }
}
